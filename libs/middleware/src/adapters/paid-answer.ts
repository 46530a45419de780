/*
 * A paid answer's headers, kept through the route. The gate sets them before the route runs (the
 * payer's token, its receipt, `Cache-Control: no-store`), and a route may set its own afterwards:
 * a site behind a CDN often sends `public, max-age=…`, and a shared cache would then store the
 * page and the payer's token and hand both to the next bot. So they are set again as the headers
 * go out, over whatever the route wrote (Node's writeHead, which end() and write() call too).
 */

import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Http2ServerResponse } from 'node:http2';

type HeadersArgument = OutgoingHttpHeaders | (string | string[] | number)[];

type NodeResponse = ServerResponse | Http2ServerResponse;

export function keepPaidAnswerHeaders(response: NodeResponse, headers: Record<string, string>): void {
  const names = new Set(Object.keys(headers).map((name) => name.toLowerCase()));
  const writeHead = response.writeHead as (...args: unknown[]) => NodeResponse;
  (response as { writeHead: unknown }).writeHead = function (
    this: NodeResponse,
    statusCode: number,
    ...rest: unknown[]
  ) {
    // writeHead(status, [message], [headers]): headers given here win over those set before, so
    // the gate's names are taken out of them.
    const last = rest.length > 0 ? rest[rest.length - 1] : undefined;
    if (last !== null && typeof last === 'object') rest[rest.length - 1] = without(last as HeadersArgument, names);
    for (const [name, value] of Object.entries(headers)) this.setHeader(name, value);
    return writeHead.call(this, statusCode, ...rest);
  };
}

function without(headers: HeadersArgument, names: Set<string>): HeadersArgument {
  if (Array.isArray(headers)) {
    if (headers.length % 2 !== 0) return headers; // Node refuses it as it is
    // The flat form: name, value, name, value…
    const kept: (string | string[] | number)[] = [];
    for (let i = 0; i + 1 < headers.length; i += 2)
      if (!names.has(String(headers[i]).toLowerCase())) kept.push(headers[i], headers[i + 1]);
    return kept;
  }
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !names.has(name.toLowerCase())));
}
