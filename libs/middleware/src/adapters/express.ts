/*
 * Express (4 and 5) and Connect: `app.use(crawlgateExpress(options))`, before your routes.
 * Uses only Node's own request/response API, so any Connect-style stack works.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { createCrawlgate, type CrawlgateOptions } from '../crawlgate';
import type { Decision } from '../decision';
import { nodeHeaders } from '../request-headers';
import { keepPaidAnswerHeaders } from './paid-answer';
import { withNodeKeyDirectoryFetch } from '../web-bot-auth/node-directory-fetch';

type NodeRequest = IncomingMessage & {
  originalUrl?: string;
  baseUrl?: string;
  ip?: string;
  app?: object & { get?: (setting: string) => unknown };
};

/** The middleware, and close(): stop the gate's background refresh and report its last counts. */
export type CrawlgateExpressMiddleware = ((
  req: NodeRequest,
  res: ServerResponse,
  next: (error?: unknown) => void,
) => void) & { close(): Promise<void> };

/**
 * The router's leniency is not read from the app: `express.Router()` ignores the app's `case
 * sensitive routing` and `strict routing`, so those settings can say strict while routes are not.
 * Lenient unless `options.routing` says otherwise.
 */
export function crawlgateExpress(options: CrawlgateOptions): CrawlgateExpressMiddleware {
  const gate = createCrawlgate(withNodeKeyDirectoryFetch(options));
  const logger = options.logger ?? console;
  let warned = false;
  /** req.ip, unless the app takes it from any X-Forwarded-For: then the connection's address, said once. */
  const addressOf = (req: NodeRequest): string | undefined => {
    if (!trustsEveryForwarder(req.app)) return req.ip ?? req.socket.remoteAddress;
    if (!warned) {
      warned = true;
      logger.warn(
        `crawlgate: this app's "trust proxy" takes the first X-Forwarded-For address from anyone (true, or a hop count past any real chain), which a client writes as it likes: crawlers are judged by the connection's address instead. Trust your proxies by address or by their exact hop count, or set crawlerIps.clientIp`,
      );
    }
    return req.socket.remoteAddress;
  };
  const middleware = function crawlgate(req: NodeRequest, res: ServerResponse, next: (error?: unknown) => void): void {
    // originalUrl: the URL before Express stripped a mount path from req.url.
    const url = req.originalUrl ?? req.url ?? '/';
    // What the router routes by: req.url, under the mount path, after any rewrite before the gate.
    const routedUrl = req.originalUrl === undefined ? undefined : `${req.baseUrl ?? ''}${req.url ?? ''}`;
    const decision = gate.handleNow({
      method: req.method ?? 'GET',
      url,
      routedUrl,
      headers: nodeHeaders(req.headers),
      ip: addressOf(req),
    });
    // A decision that needs no I/O (a person, a token, a 402) is applied at once, with no promise.
    if (decision instanceof Promise) decision.then((settled) => answer(settled, res, next), next);
    else answer(decision, res, next);
  };
  return Object.assign(middleware, { close: () => gate.close() });
}

/** Each compiled `trust proxy fn`'s verdict: the setting is read on every request (an app may change it), judged once. */
const trustsEveryForwarderOf = new WeakMap<object, boolean>();

/**
 * Whether an Express app's `trust proxy` trusts any address at any depth of X-Forwarded-For (`true`,
 * or a hop count of 64 or more: no proxy chain is that long): its req.ip is then the client's own word.
 */
function trustsEveryForwarder(app: NodeRequest['app']): boolean {
  if ((typeof app !== 'object' && typeof app !== 'function') || app === null) return false; // an Express app is a function
  const trust = typeof app.get === 'function' ? app.get('trust proxy fn') : undefined;
  if (typeof trust !== 'function') return false;
  let trusts = trustsEveryForwarderOf.get(trust);
  if (trusts === undefined) {
    // A hop count n is compiled to `index < n`: index 63 is trusted from 64 hops up. Any truthy answer
    // trusts (proxy-addr's reading), and an app may listen on IPv6 only, so both kinds are asked.
    const trusted = trust as (address: string, index: number) => unknown;
    trusts = Boolean(trusted('203.0.113.7', 63)) || Boolean(trusted('2001:db8::7', 63));
    trustsEveryForwarderOf.set(trust, trusts);
  }
  return trusts;
}

/** The gate's own answer, or on to the routes with the gate's headers set. */
function answer(decision: Decision, res: ServerResponse, next: (error?: unknown) => void): void {
  try {
    if (decision.kind === 'respond') {
      res.writeHead(decision.status, decision.headers).end(decision.body);
      return;
    }
    // Set now, sent with whatever the route answers, and set again over the route's own as it does.
    if (decision.kind === 'pass-after-payment') {
      for (const [name, value] of Object.entries(decision.headers)) res.setHeader(name, value);
      keepPaidAnswerHeaders(res, decision.headers);
    }
  } catch (error) {
    next(error); // a header Node refuses: the app's error answer, never the page nor a crashed process
    return;
  }
  next();
}
