/*
 * Hono, on any runtime: `app.use('*', crawlgateHono(options))`, before your routes.
 *
 * On @hono/node-server the gate reads the headers from Node's own message (`c.env.incoming`), as
 * the Express and Fastify adapters do: building a web Headers from it cost a person's request a
 * third of the route's speed. Elsewhere (Bun, Deno, Workers) it reads the web Request.
 * No import of hono: the entry stays edge-safe and works with any Hono 4.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { createCrawlgate, type CrawlgateOptions, type CrawlgateRequest } from '../crawlgate';
import type { Decision } from '../decision';
import { nodeHeaders } from '../request-headers';
import { gateRequestOf, responseOf } from '../web-request';
import { keepPaidAnswerHeaders } from './paid-answer';
import { writtenTarget } from './written-target';

/** What the adapter uses of Hono's Context. */
export interface HonoContext {
  req: { raw: Request };
  /** On @hono/node-server: `{ incoming, outgoing }`; elsewhere the app's bindings. */
  env?: unknown;
  res: Response;
}

/** The middleware, and close(): stop the gate's background refresh and report its last counts. */
export type CrawlgateHonoMiddleware = ((c: HonoContext, next: () => Promise<void>) => Promise<Response | void>) & {
  close(): Promise<void>;
};

/**
 * Routers here are unknown to the gate, so it prices leniently unless `options.routing` says the
 * router is case-sensitive and strict about trailing slashes (Hono's default; not `strict: false`).
 */
export function crawlgateHono(options: CrawlgateOptions): CrawlgateHonoMiddleware {
  const gate = createCrawlgate(options);
  const middleware = (c: HonoContext, next: () => Promise<void>): Promise<Response | void> => {
    const decision = gate.handleNow(requestOf(c));
    // A decision that needs no I/O (a person, a token, a 402) costs no promise of ours.
    if (decision instanceof Promise) return decision.then((settled) => answer(settled, c, next));
    return answer(decision, c, next);
  };
  return Object.assign(middleware, { close: () => gate.close() });
}

/** The gate's own answer (the routes never run), or on to the routes with the gate's headers added. */
function answer(decision: Decision, c: HonoContext, next: () => Promise<void>): Promise<Response | void> {
  if (decision.kind === 'respond') return Promise.resolve(responseOf(decision));
  if (decision.kind === 'pass') return next();
  const { headers } = decision;
  // On node-server, set again as the answer goes out: a middleware registered before the gate may
  // set its own caching headers once the gate's next() returns. Elsewhere the gate must come first.
  const outgoing = nodeResponseOf(c.env);
  if (outgoing) keepPaidAnswerHeaders(outgoing, headers);
  return next().then(() => {
    try {
      for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
    } catch {
      // Immutable headers (a proxied fetch()'s Response, Response.redirect()'s): a copy takes them.
      // The payment is settled: failing here would keep from its payer the page and the token.
      c.res = new Response(c.res.body, c.res);
      for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
    }
  });
}

/**
 * On node-server, the URL the client asked for is Node's, and the one Hono routes on the web
 * Request's: a mounted app (`app.mount('/premium', inner.fetch)`) gets a Request with the prefix
 * cut off, and a gate inside it prices both readings. Node's own URL may be cut too, when the app's
 * request listener is mounted in Express, Connect or @fastify/middie (`use('/premium', listener)`):
 * they keep the client's in originalUrl. Express keeps the prefix it matched in baseUrl, which reads
 * the two as one path, as the Express adapter does; Connect and middie do not, and the two readings
 * stay two (a prefix guessed from them would take a rewrite for a mount). Elsewhere the gate sees
 * only the Request: put it on the outermost app.
 */
function requestOf(c: HonoContext): CrawlgateRequest {
  const { raw } = c.req;
  const incoming = nodeMessageOf(c.env);
  if (!incoming) return gateRequestOf(raw);
  const url = writtenTarget(incoming) ?? incoming.originalUrl ?? incoming.url ?? raw.url;
  // Mounted by another framework, whose match of the prefix is its own (Express's ignores case):
  // the routing declared for Hono does not hold for the whole path, which is priced leniently.
  const mounted = url !== incoming.url;
  return {
    method: raw.method,
    url,
    routedUrl: `${mounted ? (incoming.baseUrl ?? '') : ''}${pathAndQuery(raw.url)}`,
    headers: nodeHeaders(incoming.headers),
    ip: incoming.socket?.remoteAddress,
    routing: mounted ? {} : undefined,
  };
}

/** An absolute URL's path and query, as Node's message spells a request target. */
function pathAndQuery(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  return start === -1 ? '/' : url.slice(start);
}

/** @hono/node-server's IncomingMessage, told apart from a binding that happens to be named `incoming`. */
function nodeMessageOf(env: unknown): (IncomingMessage & { originalUrl?: string; baseUrl?: string }) | undefined {
  const incoming = (env as { incoming?: Partial<IncomingMessage> } | undefined)?.incoming;
  if (typeof incoming !== 'object' || incoming === null) return undefined;
  if (typeof incoming.headers !== 'object' || !Array.isArray(incoming.rawHeaders)) return undefined;
  return incoming as IncomingMessage;
}

/** @hono/node-server's ServerResponse, beside its IncomingMessage. */
function nodeResponseOf(env: unknown): ServerResponse | undefined {
  if (!nodeMessageOf(env)) return undefined;
  const outgoing = (env as { outgoing?: Partial<ServerResponse> }).outgoing;
  if (typeof outgoing !== 'object' || outgoing === null) return undefined;
  if (typeof outgoing.writeHead !== 'function' || typeof outgoing.setHeader !== 'function') return undefined;
  return outgoing as ServerResponse;
}
