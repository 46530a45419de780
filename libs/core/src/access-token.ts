/*
 * Access tokens: base64url(JSON payload) "." base64url(HMAC-SHA256(utf8(secret), payload segment)).
 * The MAC covers the segment exactly as sent, so verification never re-serialises JSON. A token
 * binds one gate's payment to one site and one path (as requestPath() spells it) until `exp`.
 */

import { base64urlDecode, base64urlEncode, utf8Decode, utf8Encode } from './base64url';
import { constantTimeEqual } from './constant-time';
import { hmacSha256 } from './hmac';
import { requestPath } from './request-path';

/** Default lifetime of an access token (spec: 30 minutes after issuance). */
export const ACCESS_TOKEN_TTL_SECONDS = 30 * 60;
/** Longer strings are malformed before any decoding or MAC work is spent on them. */
export const MAX_ACCESS_TOKEN_LENGTH = 4096;
// 9999-12-31T23:59:59Z. Also catches milliseconds passed where seconds are meant.
const MAX_UNIX_SECONDS = 253_402_300_799;
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

export type TokenInvalidReason = 'malformed' | 'bad_signature' | 'expired' | 'wrong_site' | 'wrong_path';

export type TokenCheck = { valid: true; payload: AccessTokenPayload } | { valid: false; reason: TokenInvalidReason };

export interface VerifyAccessTokenOptions {
  /** Several secrets during a rotation: a token signed with any of them passes. */
  secret: string | readonly string[];
  siteId: string;
  /** The requested URL or path; when given, it must be the path the token was paid for. */
  url?: string;
  /** Unix seconds; defaults to the current time. */
  now?: number;
}

/** Throws TypeError for a payload that verifyAccessToken() would call malformed, or an empty secret. */
export function signAccessToken(payload: AccessTokenPayload, secret: string): string {
  const fields = toPayload(payload);
  if (!fields) throw new TypeError('Invalid access token payload: non-empty strings, url starting with "/", iat/exp in whole unix seconds');
  if (typeof secret !== 'string' || secret.length === 0) throw new TypeError('Access token secret must be a non-empty string');
  // Fixed field order, and nothing but the fields: callers may pass richer objects.
  const segment = base64urlEncode(utf8Encode(JSON.stringify(fields)));
  const token = `${segment}.${base64urlEncode(hmacSha256(secret, segment))}`;
  if (token.length > MAX_ACCESS_TOKEN_LENGTH) throw new TypeError(`Access token would exceed ${MAX_ACCESS_TOKEN_LENGTH} characters`);
  return token;
}

/**
 * Checks, in order: malformed, bad_signature, expired (now >= exp), wrong_site, wrong_path
 * (only when opts.url is given).
 */
export function verifyAccessToken(token: string, opts: VerifyAccessTokenOptions): TokenCheck {
  const decoded = decode(token);
  if (!decoded) return { valid: false, reason: 'malformed' };
  const { segment, signature, payload } = decoded;

  const secrets = typeof opts.secret === 'string' ? [opts.secret] : opts.secret;
  let signed = false;
  for (const secret of secrets) {
    // An empty secret is a configuration slip, never a key that verifies.
    if (typeof secret === 'string' && secret.length > 0 && constantTimeEqual(hmacSha256(secret, segment), signature)) signed = true;
  }
  if (!signed) return { valid: false, reason: 'bad_signature' };

  const now = opts.now ?? Date.now() / 1000;
  // Written as !(now < exp) so that a NaN clock counts as expired, not as forever valid.
  if (!(now < payload.exp)) return { valid: false, reason: 'expired' };
  if (payload.site_id !== opts.siteId) return { valid: false, reason: 'wrong_site' };
  if (opts.url !== undefined && requestPath(opts.url) !== payload.url) return { valid: false, reason: 'wrong_path' };
  return { valid: true, payload };
}

/** The payload of a well-formed token, signature NOT checked: only to pick the key (`kid`). */
export function peekAccessTokenPayload(token: string): AccessTokenPayload | null {
  return decode(token)?.payload ?? null;
}

function decode(token: unknown): { segment: string; signature: Uint8Array; payload: AccessTokenPayload } | null {
  if (typeof token !== 'string' || token.length > MAX_ACCESS_TOKEN_LENGTH) return null;
  const parts = token.split('.');
  if (parts.length !== 2) return null;
  const [segment, signatureText] = parts;
  const signature = base64urlDecode(signatureText);
  const bytes = base64urlDecode(segment);
  const json = bytes && utf8Decode(bytes);
  if (signature?.length !== MAC_BYTES || json == null) return null;
  try {
    const payload = toPayload(JSON.parse(json));
    return payload && { segment, signature, payload };
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
