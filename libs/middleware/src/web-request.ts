/*
 * The web Request/Response runtimes' side of the gate, shared by the fetch and Hono adapters: a
 * Request as the gate reads it, and the gate's own answer as a Response.
 */

import type { CrawlgateRequest } from './crawlgate';
import type { Decision } from './decision';
import { headersOfFetch } from './request-headers';

/** A web Request as the gate reads it. */
export function gateRequestOf(request: Request, ip?: string): CrawlgateRequest {
  return { method: request.method, url: request.url, headers: headersOfFetch(request.headers), ip };
}

/** The gate's own answer as a web Response. */
export function responseOf(decision: Extract<Decision, { kind: 'respond' }>): Response {
  return new Response(decision.body, { status: decision.status, headers: decision.headers });
}
