/*
 * Web-standard Request/Response runtimes: Hono, Next.js middleware, Cloudflare Workers, Deno, Bun.
 *
 *   const gate = crawlgateFetch(options);
 *   const { response, headers } = await gate(request);
 *   if (response) return response;          // 402, 403, 503, pay.json: answer with it
 *   const page = await serve(request);       // pass: serve as usual...
 *   headers.forEach((v, k) => page.headers.set(k, v)); // ...with the payment's headers, if any
 *   // (a fetched page has immutable headers: copy it first, new Response(page.body, page))
 *
 * `headers` is empty unless a payment just settled (X-PAYMENT-RESPONSE, X-Crawlgate-Token, ...).
 */

import { createCrawlgate, type CrawlgateOptions } from '../crawlgate';
import { gateRequestOf, responseOf } from '../web-request';

export type CrawlgateFetchResult =
  { response: Response; headers?: undefined } | { response?: undefined; headers: Headers };

/**
 * The gate, and close(): stop its background refresh and report its last counts. `routedUrl`: the
 * path (and query) the router routes the request by, when a rewrite before it made it another
 * (Next.js's i18n locale stripped: `request.nextUrl.pathname`); priced too, the higher price
 * binding, and no token opens such a request (CrawlgateRequest.routedUrl).
 */
export type CrawlgateFetchGate = ((
  request: Request,
  ip?: string,
  routedUrl?: string,
) => Promise<CrawlgateFetchResult>) & {
  close(): Promise<void>;
};

/**
 * Routers here are unknown to the gate, so it prices leniently unless `options.routing` says the
 * router is case-sensitive and strict about trailing slashes (Hono's default; not `strict: false`).
 */
export function crawlgateFetch(options: CrawlgateOptions): CrawlgateFetchGate {
  const gate = createCrawlgate(options);
  const handle = async (request: Request, ip?: string, routedUrl?: string): Promise<CrawlgateFetchResult> => {
    const read = gateRequestOf(request, ip);
    const decision = await gate.handleNow(rerouted(request, routedUrl) ? { ...read, routedUrl } : read);
    if (decision.kind === 'respond') return { response: responseOf(decision) };
    // No init for a plain pass: converting even an empty record showed in the profile.
    return { headers: decision.kind === 'pass-after-payment' ? new Headers(decision.headers) : new Headers() };
  };
  return Object.assign(handle, { close: () => gate.close() });
}

/** Whether the router routes by another target than the request's own (its path and query). */
function rerouted(request: Request, routedUrl: string | undefined): routedUrl is string {
  if (routedUrl === undefined) return false;
  const url = new URL(request.url);
  return routedUrl !== url.pathname + url.search;
}
