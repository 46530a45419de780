/*
 * The web Request/Response runtimes' side of the gate, shared by the fetch and Hono adapters: a
 * Request as the gate reads it, and the gate's own answer as a Response.
 */

import type { CrawlgateRequest } from './crawlgate';
import type { Decision } from './decision';
import { headersOfFetch } from './request-headers';

/**
 * Cloudflare Workers say so in navigator.userAgent. There the client's address is CF-Connecting-IP,
 * which Cloudflare sets on every request it hands a Worker (a client's own value never gets through).
 * Anywhere else that header is whatever the client wrote, and is never read; self-hosted workerd
 * says Cloudflare-Workers too, with no edge before it, so the request must also carry the `cf`
 * properties the edge gives it.
 */
const ON_CLOUDFLARE_WORKERS =
  (globalThis as { navigator?: { userAgent?: unknown } }).navigator?.userAgent === 'Cloudflare-Workers';

/** A web Request as the gate reads it; `ip` the caller's, else on Cloudflare Workers the address Cloudflare gives. */
export function gateRequestOf(request: Request, ip?: string, onWorkers = ON_CLOUDFLARE_WORKERS): CrawlgateRequest {
  const address =
    ip ?? (onWorkers && cameThroughEdge(request) ? (request.headers.get('cf-connecting-ip') ?? undefined) : undefined);
  return { method: request.method, url: request.url, headers: headersOfFetch(request.headers), ip: address };
}

/** Whether Cloudflare's edge handed this request over: it sets `request.cf` (colo, country, …). */
function cameThroughEdge(request: Request): boolean {
  const cf = (request as Request & { cf?: unknown }).cf;
  return typeof cf === 'object' && cf !== null;
}

/** The gate's own answer as a web Response. */
export function responseOf(decision: Extract<Decision, { kind: 'respond' }>): Response {
  return new Response(decision.body, { status: decision.status, headers: decision.headers });
}
