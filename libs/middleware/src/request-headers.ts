/*
 * Reading the few request headers the gate cares about, from Node's header record (lower-case
 * names, repeated headers as arrays) or anything shaped like it.
 */

import { isAccessTokenShaped, MAX_PRICE_MICROS, parsePriceUsd } from '@crawlgate/core';

export type HeaderRecord = Record<string, string | string[] | undefined>;

/** Marks a record whose names are all lower-case: headerValue reads it with no scan of its names. */
const LOWER_CASE_NAMES = Symbol('crawlgate: lower-case header names');
type Marked = HeaderRecord & { [LOWER_CASE_NAMES]?: true };

/**
 * The headers under lower-case names, read as headerValue reads them (the lower-case name's value,
 * else the last other spelling's), made once per request: every later lookup is then one property
 * read, where each header absent from a hand-built record would cost a scan of all its names.
 */
export function lowerCaseHeaders(headers: HeaderRecord): HeaderRecord {
  if (hasLowerCaseNames(headers)) return headers;
  const record: Marked = { [LOWER_CASE_NAMES]: true };
  for (const key of Object.keys(headers)) {
    const lower = key.toLowerCase();
    if (lower === key || headers[lower] === undefined) record[lower] = headers[key];
  }
  return record;
}

/**
 * Node's own header record (IncomingMessage lower-cases every name), marked as lower-case so that
 * the gate reads it as it is: no copy per request. Only for `message.headers` itself.
 */
export function nodeHeaders(headers: HeaderRecord): HeaderRecord {
  (headers as Marked)[LOWER_CASE_NAMES] = true;
  return headers;
}

/** Whether `headers` is known to have lower-case names only (nodeHeaders, lowerCaseHeaders, headersOfFetch). */
export const hasLowerCaseNames = (headers: HeaderRecord): boolean => (headers as Marked)[LOWER_CASE_NAMES] === true;

/** A fetch Headers as a record for the gate (its names are lower-case already). */
export function headersOfFetch(headers: Headers): HeaderRecord {
  const record: Marked = { [LOWER_CASE_NAMES]: true };
  headers.forEach((value, name) => {
    record[name] = value;
  });
  return record;
}

/** The first value of a header, case-insensitively; undefined when absent or empty. */
export function headerValue(headers: HeaderRecord, name: string): string | undefined {
  const wanted = name.toLowerCase();
  let value = headers[wanted];
  if (value === undefined && !hasLowerCaseNames(headers)) {
    // Node lower-cases names, but a hand-built record may not.
    for (const key of Object.keys(headers)) if (key.toLowerCase() === wanted) value = headers[key];
  }
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first === '' ? undefined : first;
}

/**
 * The access token a request presents: X-Crawlgate-Token, else an `Authorization: Bearer` value
 * shaped like a Crawlgate token. Other bearer values belong to the site's own auth, so they
 * neither count as a token nor mark the request as an agent's.
 */
export function presentedToken(headers: HeaderRecord): string | undefined {
  const explicit = headerValue(headers, 'x-crawlgate-token');
  if (explicit) return explicit.trim();
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(headerValue(headers, 'authorization') ?? '')?.[1];
  return bearer && isAccessTokenShaped(bearer) ? bearer : undefined;
}

/**
 * A Cloudflare-style price header, `USD 0.01` (the currency may be omitted), as micro-USD.
 * Null when absent, undefined when present but unreadable.
 */
export function crawlerPrice(
  headers: HeaderRecord,
  name: 'crawler-max-price' | 'crawler-exact-price',
): bigint | null | undefined {
  const raw = headerValue(headers, name);
  if (raw === undefined) return null;
  const m = /^\s*(?:USD\s+)?([0-9.]+)\s*$/i.exec(raw);
  if (!m) return undefined;
  // Prices end at 1 USD, so a larger cap means "any price"; a larger exact price matches none.
  if (Number(m[1]) > 1) return name === 'crawler-max-price' ? MAX_PRICE_MICROS : -1n;
  const parsed = parsePriceUsd(m[1]);
  return parsed.ok ? parsed.micros : undefined;
}
