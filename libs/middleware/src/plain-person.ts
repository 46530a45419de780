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
 * own auth is left to the full decision too). crawlgate.spec.ts checks that the list is whole, and
 * plain-person.spec.ts that isPlainPersonRequest reads each.
 */
export const AGENT_HEADERS: readonly string[] = [
  'x-crawlgate-token',
  'authorization',
  ...PAYMENT_HEADERS,
  'signature-agent',
  'signature-input',
];

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
  // Read by name, not in a loop over AGENT_HEADERS: each read is then cached for the record's shape
  // (plain-person.spec.ts holds these reads to the list).
  if (
    headers['x-crawlgate-token'] !== undefined ||
    headers.authorization !== undefined ||
    headers['payment-signature'] !== undefined ||
    headers['x-payment'] !== undefined ||
    headers['signature-agent'] !== undefined ||
    headers['signature-input'] !== undefined
  )
    return false;
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
  const pathEnd = plainPathEnd(url);
  return pathEnd > 0 && (answeredPath === undefined || url.slice(0, pathEnd) !== answeredPath);
}

const SLASH = 0x2f;
const QUERY = 0x3f;

/**
 * Where the path of a target every reading takes as written ends (its length, or its "?"), or -1
 * for any other target. Such a path is "/" then segments of letters, digits, "_", "~" and "-"
 * split by single slashes: no dot (every free path and every path the gate answers itself has
 * one: robots.txt, /.well-known/…, the license's default), escape, ";", backslash or doubled slash.
 * A loop over the codes, not a regular expression: this runs on every person's request.
 */
function plainPathEnd(url: string): number {
  if (typeof url !== 'string' || url.charCodeAt(0) !== SLASH) return -1;
  for (let i = 1; i < url.length; i++) {
    const code = url.charCodeAt(i);
    if (code === QUERY) return i;
    if (code === SLASH ? url.charCodeAt(i - 1) === SLASH : !isSegmentCode(code)) return -1;
  }
  return url.length;
}

const isSegmentCode = (code: number): boolean =>
  (code >= 0x61 && code <= 0x7a) || // a-z
  (code >= 0x41 && code <= 0x5a) || // A-Z
  (code >= 0x30 && code <= 0x39) || // 0-9
  code === 0x5f || // _
  code === 0x7e || // ~
  code === 0x2d; // -
