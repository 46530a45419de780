/*
 * Web-standard Request/Response runtimes: Hono, Next.js middleware, Cloudflare Workers, Deno, Bun.
 *
 *   const gate = crawlgateFetch(options);
 *   const { response, headers } = await gate(request);
 *   if (response) return response;          // 402, 403, 503, pay.json: answer with it
 *   const page = await serve(request);       // pass: serve as usual...
 *   headers.forEach((v, k) => page.headers.set(k, v)); // ...with the payment's headers, if any
 *
 * `headers` is empty unless a payment just settled (X-PAYMENT-RESPONSE, X-Crawlgate-Token, ...).
 */

import { createCrawlgate, type CrawlgateOptions } from '../crawlgate';

export type CrawlgateFetchResult =
  | { response: Response; headers?: undefined }
  | { response?: undefined; headers: Headers };

export function crawlgateFetch(options: CrawlgateOptions): (request: Request, ip?: string) => Promise<CrawlgateFetchResult> {
  const gate = createCrawlgate(options);
  return async (request, ip) => {
    const decision = await gate.handle({ method: request.method, url: request.url, headers: Object.fromEntries(request.headers), ip });
    if (decision.kind === 'respond') return { response: new Response(decision.body, { status: decision.status, headers: decision.headers }) };
    return { headers: new Headers(decision.kind === 'pass-after-payment' ? decision.headers : {}) };
  };
}
