/*
 * A person's plain request, recognised in a few reads ahead of the gate's full decision. Most of a
 * site's requests are people's, and the full decision reads the route's spellings, the free and
 * licensed paths and each header that could make the visitor an agent: together several times
 * what the framework's own middleware costs a request (tools/bench). What this recognises, the full
 * decision passes as a person too; anything else, however ordinary, goes the full way.
 */

import type { CrawlgateRequest } from './crawlgate';
import { isPersonUserAgent } from './bots/classify';
import { hasLowerCaseNames } from './request-headers';
import { PAYMENT_HEADERS } from './x402-headers';

/**
 * Every header but the User-Agent that the full decision reads of a person: each may make the
 * visitor an agent whatever its User-Agent (a token, a payment, a Web Bot Auth signature; the site's
 * own auth is left to the full decision too). crawlgate.spec.ts checks that the list is whole.
 */
export const AGENT_HEADERS: readonly string[] = [
  'x-crawlgate-token',
  'authorization',
  ...PAYMENT_HEADERS,
  'signature-agent',
  'signature-input',
];

/**
 * A target every reading takes as written: segments of letters, digits, "_", "~" and "-", then the
 * query. No dot (every free path and every path the gate answers itself has one: robots.txt,
 * /.well-known/…, the license's default), escape, ";", backslash or doubled slash.
 */
const PLAIN_TARGET = /^\/(?:[A-Za-z0-9_~-]+\/)*[A-Za-z0-9_~-]*(?:\?|$)/;

/**
 * Whether the full decision would pass this request as a person's. Only for a target written as a
 * path (an absolute URL goes the full way) and headers known to be lower-case (marked by
 * nodeHeaders): what the Express, Fastify and Hono-on-Node adapters hand over, not NestJS's or a
 * web Request's. `answeredPath`: a path the gate answers itself that may have no dot (the license
 * document's).
 */
export function isPlainPersonRequest(request: CrawlgateRequest, answeredPath: string | undefined): boolean {
  const { headers } = request;
  if (!hasLowerCaseNames(headers)) return false;
  for (const name of AGENT_HEADERS) if (headers[name] !== undefined) return false;
  const userAgent = headers['user-agent'];
  return (
    typeof userAgent === 'string' &&
    isPlainTarget(request.url, answeredPath) &&
    (request.routedUrl === undefined ||
      request.routedUrl === request.url ||
      isPlainTarget(request.routedUrl, answeredPath)) &&
    isPersonUserAgent(userAgent)
  );
}

function isPlainTarget(url: string, answeredPath: string | undefined): boolean {
  if (typeof url !== 'string' || !PLAIN_TARGET.test(url)) return false;
  if (answeredPath === undefined) return true;
  const query = url.indexOf('?');
  return (query < 0 ? url : url.slice(0, query)) !== answeredPath;
}
