/*
 * Access tokens: base64url(JSON payload) "." base64url(HMAC-SHA256(utf8(secret), payload segment)).
 * The MAC covers the segment exactly as sent, so verification never re-serialises JSON. A token
 * binds one gate's payment to one site and one path (as requestPath() spells it) until `exp`.
 * Verification checks the MAC before it reads the payload's UTF-8 and JSON.
 */

import {
  base64urlDecode,
  base64urlDecodeUtf8,
  base64urlEncode,
  base64urlEncodeUtf8,
  utf8ByteLength,
} from './base64url';
import { constantTimeEqual } from './constant-time';
import { hmacSha256 } from './hmac';
import { MAX_UNIX_SECONDS } from './limits';
import { isPlainRoute, readRoute } from './route';

/** Default lifetime of an access token (spec: 30 minutes after issuance). */
export const ACCESS_TOKEN_TTL_SECONDS = 30 * 60;
/**
 * The shortest lifetime the API issues a token for (its ACCESS_TOKEN_TTL_SECONDS): an agent takes a
 * payment as having bought at least this long, whatever expiry a token it cannot check names.
 */
export const MIN_ACCESS_TOKEN_TTL_SECONDS = 60;
/**
 * The longest lifetime the API issues a token for (its ACCESS_TOKEN_TTL_SECONDS); an agent keeps
 * none longer, and none that claims to live longer verifies (malformed).
 */
export const MAX_ACCESS_TOKEN_TTL_SECONDS = 7 * 24 * 3600;
/**
 * How far a token's iat may be ahead of the verifier's clock (the API's clock and a publisher's
 * server's differ a little). Further ahead it is not_yet_valid: a token signed for later, with a
 * secret that has since leaked, must not outlive that secret by its claimed issue date.
 */
export const ACCESS_TOKEN_CLOCK_SKEW_SECONDS = 300;
/** Longer strings are malformed before any decoding or MAC work is spent on them. */
export const MAX_ACCESS_TOKEN_LENGTH = 4096;
/**
 * The most a path may weigh in a token: the UTF-8 bytes of its JSON string. Every path within it
 * fits a token (and a gate) whatever its characters; a heavier one is never gated (414), so no
 * payment is taken for a path no token could then be issued for.
 */
export const MAX_TOKEN_PATH_BYTES = 2048;

/** Whether a token (and a gate) can bind `path`: see MAX_TOKEN_PATH_BYTES. */
export function fitsAccessToken(path: string): boolean {
  // At most three UTF-8 bytes per UTF-16 unit, and six for a JSON escape: a short path is measured no further.
  if (path.length * 6 + 2 <= MAX_TOKEN_PATH_BYTES) return true;
  return utf8ByteLength(JSON.stringify(path)) <= MAX_TOKEN_PATH_BYTES;
}
const MAC_BYTES = 32;

/** iat and exp are unix seconds; url is the paid path as produced by requestPath(). */
export interface AccessTokenPayload {
  gate_id: string;
  site_id: string;
  url: string;
  kid: string;
  iat: number;
  exp: number;
}

/** Why verifyAccessToken refuses a token, in the order it checks (malformed also once more, after the signature). */
export const TOKEN_INVALID_REASONS = [
  'malformed',
  'bad_signature',
  'expired',
  'not_yet_valid',
  'wrong_site',
  'wrong_path',
] as const;

export type TokenInvalidReason = (typeof TOKEN_INVALID_REASONS)[number];

/**
 * A secret and what bounds it. With `kid` (the API's key id of the secret) it verifies only tokens
 * that name that kid; with `validUntil` nothing from that instant on (unix seconds, a Date, or an
 * ISO 8601 text such as a rotation's previous_valid_until): how a rotated-out secret kept for its
 * grace period stops opening pages on time without a redeploy. A validUntil that cannot be read
 * (null: a revoked secret's previous_valid_until) verifies nothing.
 */
export interface AccessTokenKey {
  secret: string;
  kid?: string;
  validUntil?: number | Date | string | null;
}

export type TokenCheck = { valid: true; payload: AccessTokenPayload } | { valid: false; reason: TokenInvalidReason };

/**
 * What a token is checked against. Which page it may open is said explicitly: the request's
 * target (`url`), a path already spelled (`path`), or, only for a site-wide question, `anyPath`.
 * Given none, or a `url` that is not a string, no token is valid: a slip (`url: request.path` where
 * there is none) must never open every page of the site.
 */
export type VerifyAccessTokenOptions = {
  /**
   * Several secrets during a rotation: a token signed with any of them that verifies now passes. A
   * plain string verifies whatever kid a token names and for ever: bound a previous secret with
   * AccessTokenKey's kid and validUntil.
   */
  secret: string | readonly (string | AccessTokenKey)[];
  siteId: string;
  /** Unix seconds; defaults to the current time. */
  now?: number;
} & (
  | {
      /**
       * The request target exactly as received: path and query (Express: req.originalUrl, never the
       * mount-relative req.url), or the runtime's absolute Request.url; never assembled from the
       * Host header. Its requestPath() must be the path the token was paid for, and it must be a
       * plain route: a target routers read apart (a dot segment, an escaped slash, a ";" cut) is
       * never opened by a token (core's route.ts), as the middleware does.
       */
      url: string;
      path?: never;
      anyPath?: never;
    }
  | {
      /**
       * Instead of url: the request's path as requestPath() already spelled it (a caller that priced
       * the request has it, and checked it is a plain route), compared as is. requestPath() of its
       * own output is not always the same path ("/a%3Fb" is "/a?b", which would read as "/a"), so a
       * path must not be spelled twice.
       */
      path: string;
      url?: never;
      anyPath?: never;
    }
  | {
      /** No path check: whether the token is the site's, for any page (POST /v1/access-tokens/verify without url). */
      anyPath: true;
      url?: never;
      path?: never;
    }
);

/**
 * Throws TypeError for a payload whose shape verifyAccessToken() would call malformed, or an empty
 * secret. Its lifetime is the caller's: a test may sign a longer one than any verifies.
 */
export function signAccessToken(payload: AccessTokenPayload, secret: string): string {
  const fields = toPayload(payload);
  if (!fields)
    throw new TypeError(
      'Invalid access token payload: non-empty strings, url starting with "/", iat/exp in whole unix seconds',
    );
  if (typeof secret !== 'string' || secret.length === 0)
    throw new TypeError('Access token secret must be a non-empty string');
  // Fixed field order, and nothing but the fields: callers may pass richer objects.
  const segment = base64urlEncodeUtf8(JSON.stringify(fields));
  const token = `${segment}.${base64urlEncode(hmacSha256(secret, segment))}`;
  if (token.length > MAX_ACCESS_TOKEN_LENGTH)
    throw new TypeError(`Access token would exceed ${MAX_ACCESS_TOKEN_LENGTH} characters`);
  return token;
}

/**
 * Checks, in order: malformed, bad_signature (no given secret that verifies now signed it),
 * malformed again for a signed token that lives longer than MAX_ACCESS_TOKEN_TTL_SECONDS, expired
 * (now >= exp), not_yet_valid (iat ahead of now by more than the skew), wrong_site, wrong_path
 * (only when opts.path or opts.url is given; path wins when both are).
 */
export function verifyAccessToken(token: string, opts: VerifyAccessTokenOptions): TokenCheck {
  const parts = split(token);
  if (!parts) return { valid: false, reason: 'malformed' };
  const { segment, signature, json } = parts;
  // A clock that is not a number (a string would compare as text) is no time: nothing verifies.
  const now = opts.now === undefined ? Date.now() / 1000 : typeof opts.now === 'number' ? opts.now : NaN;

  const secrets = typeof opts.secret === 'string' ? [opts.secret] : opts.secret;
  const signedBy: AccessTokenKey[] = [];
  for (const entry of secrets) {
    const key = keyOf(typeof entry === 'string' ? { secret: entry } : entry);
    if (key && constantTimeEqual(hmacSha256(key.secret, segment), signature)) signedBy.push(key);
  }
  // Read after the MAC; for a forged token only to tell a malformed payload from a bad signature.
  const payload = readPayload(json);
  if (!payload) return { valid: false, reason: 'malformed' };
  // A secret listed more than once (plain beside bounded) is held to every entry of it: the strictest.
  if (signedBy.length === 0 || !signedBy.every((key) => verifiesNow(key, payload.kid, now)))
    return { valid: false, reason: 'bad_signature' };
  // Signed, yet no token the API issues: one of a leaked secret, made to outlive it.
  if (payload.exp - payload.iat > MAX_ACCESS_TOKEN_TTL_SECONDS) return { valid: false, reason: 'malformed' };

  // Written as !(now < exp) so that a NaN clock counts as expired, not as forever valid.
  if (!(now < payload.exp)) return { valid: false, reason: 'expired' };
  if (payload.iat > now + ACCESS_TOKEN_CLOCK_SKEW_SECONDS) return { valid: false, reason: 'not_yet_valid' };
  if (payload.site_id !== opts.siteId) return { valid: false, reason: 'wrong_site' };
  if (!pathMatches(payload.url, opts)) return { valid: false, reason: 'wrong_path' };
  return { valid: true, payload };
}

/**
 * A secret entry a caller may have built by hand, read from its own properties only (nothing
 * inherited, should Object.prototype have been written to); null when it is none. An empty secret
 * is a configuration slip, never a key that verifies.
 */
function keyOf(entry: unknown): AccessTokenKey | null {
  if (typeof entry !== 'object' || entry === null) return null;
  const own = (name: string) => (Object.hasOwn(entry, name) ? (entry as Record<string, unknown>)[name] : undefined);
  const secret = own('secret');
  const kid = own('kid');
  if (typeof secret !== 'string' || secret.length === 0 || (kid !== undefined && typeof kid !== 'string')) return null;
  // A validUntil written but undefined (an unset variable) is unreadable, not the absence of a bound.
  return Object.hasOwn(entry, 'validUntil')
    ? { secret, kid, validUntil: (own('validUntil') as AccessTokenKey['validUntil']) ?? NaN }
    : { secret, kid };
}

/** Whether `key` may vouch for a token naming `kid` at `now`: its own kid, if it has one, and before its validUntil. */
function verifiesNow(key: AccessTokenKey, kid: string, now: number): boolean {
  if (key.kid !== undefined && key.kid !== kid) return false;
  if (!('validUntil' in key)) return true;
  // Written as now < until so that an unreadable bound (NaN) or clock ends the secret.
  return now < unixSeconds(key.validUntil);
}

/** An ISO 8601 date and time with its offset: without one, Date.parse reads local time, which differs from server to server. */
const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;

/**
 * Unix seconds of a bound; NaN for anything but a time up to MAX_UNIX_SECONDS (a number above it
 * is milliseconds, read as seconds it would be a bound some 57,000 years away).
 */
function unixSeconds(at: unknown): number {
  const seconds =
    typeof at === 'number'
      ? at
      : at instanceof Date
        ? at.getTime() / 1000
        : typeof at === 'string'
          ? isoSeconds(at)
          : NaN;
  return seconds >= 0 && seconds <= MAX_UNIX_SECONDS ? seconds : NaN;
}

/** NaN unless `text` is an ISO_INSTANT of a real day (Date.parse reads 31 June as 1 July). */
function isoSeconds(text: string): number {
  const parts = ISO_INSTANT.exec(text);
  if (!parts) return NaN;
  const [year, month, day] = parts.slice(1, 4).map(Number);
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return NaN;
  return Date.parse(text) / 1000;
}

/** Whether the request `opts` name may be opened by a token paid for `paid` (VerifyAccessTokenOptions). */
function pathMatches(paid: string, opts: VerifyAccessTokenOptions): boolean {
  if (typeof opts.path === 'string') return opts.path === paid;
  if (typeof opts.url === 'string') {
    const route = readRoute(opts.url);
    return isPlainRoute(route) && route.path === paid;
  }
  return opts.url === undefined && opts.path === undefined && opts.anyPath === true;
}

/** A signed JSON object's base64url (always `eyJ…`, for `{"`), a dot, a 32-byte MAC's. */
const TOKEN_SHAPE = /^eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/;

/**
 * Whether `text` has an access token's form, nothing decoded and nothing checked: how the gate
 * tells its tokens from other `Authorization: Bearer` values (a JWT has three parts) without
 * reading the payload twice. verifyAccessToken judges it.
 */
export function isAccessTokenShaped(text: string): boolean {
  return text.length <= MAX_ACCESS_TOKEN_LENGTH && TOKEN_SHAPE.test(text);
}

/** The payload of a well-formed token, signature NOT checked: only to pick the key (`kid`). */
export function peekAccessTokenPayload(token: string): AccessTokenPayload | null {
  const parts = split(token);
  return parts && readPayload(parts.json);
}

/** The two segments of a token, the payload's as JSON text (the MAC 32 bytes long); null when anything is off. */
function split(token: unknown): { segment: string; signature: Uint8Array; json: string } | null {
  if (typeof token !== 'string' || token.length > MAX_ACCESS_TOKEN_LENGTH) return null;
  const dot = token.indexOf('.');
  if (dot < 0 || token.indexOf('.', dot + 1) >= 0) return null;
  const segment = token.slice(0, dot);
  const signature = base64urlDecode(token.slice(dot + 1));
  const json = base64urlDecodeUtf8(segment);
  return signature?.length === MAC_BYTES && json !== null ? { segment, signature, json } : null;
}

function readPayload(json: string): AccessTokenPayload | null {
  try {
    return toPayload(JSON.parse(json));
  } catch {
    return null;
  }
}

/** A copy holding exactly the payload fields, or null when a field is missing or of the wrong type. */
function toPayload(value: unknown): AccessTokenPayload | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const { gate_id, site_id, url, kid, iat, exp } = value as Record<string, unknown>;
  const ok =
    isFilled(gate_id) &&
    isFilled(site_id) &&
    isFilled(kid) &&
    typeof url === 'string' &&
    url.startsWith('/') &&
    isUnixSeconds(iat) &&
    isUnixSeconds(exp);
  return ok ? { gate_id, site_id, url, kid, iat, exp } : null;
}

function isFilled(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

function isUnixSeconds(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= MAX_UNIX_SECONDS;
}
