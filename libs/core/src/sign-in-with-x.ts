/*
 * x402's `sign-in-with-x` extension (CAIP-122 / SIWE, EVM only here): a wallet that paid for a path
 * proves it in a SIGN-IN-WITH-X header and reads the page again without paying. The middleware
 * puts a challenge in every 402; the API checks the proof (POST /v1/access-tokens/siwx).
 *
 * The challenge's nonce is stateless, MAC'ed with the site's access-token secret like gates:
 *
 *   nonce = hex(16 random bytes) ‖ hex12(exp) ‖ hex(HMAC-SHA256(secret, SIWX_NONCE_MAC_DOMAIN + JSON [site, path, random, exp]))
 *
 * so the API knows it issued the nonce for this site and path until `exp` without storing
 * challenges; only spent nonces are stored (replays). Letters and digits only, as EIP-4361 wants.
 * Everything the signed message holds besides the address and nonce follows from the site, the
 * path and `exp` (issuedAt is exp − SIWX_CHALLENGE_SECONDS), so the API rebuilds the message from
 * what it expects, never from what the proof claims. Written here rather than imported from
 * @x402/extensions (a test-only dependency); sign-in-with-x.spec.ts holds it to that package.
 */

import { bytesToHex, hexToBytes } from '@noble/hashes/utils';
import { ACCESS_TOKEN_CLOCK_SKEW_SECONDS } from './access-token';
import { decodeBase64Json, utf8Encode } from './base64url';
import { constantTimeEqual } from './constant-time';
import { hmacSha256 } from './hmac';
import { HEX_BYTES } from './hex-bytes';
import { isEvmAddress, randomBytes } from './keys';

export const SIGN_IN_WITH_X = 'sign-in-with-x';
/** The request header a proof comes in (header names are case-insensitive). */
export const SIGN_IN_WITH_X_HEADER = 'sign-in-with-x';
/** How long a challenge may be answered. */
export const SIWX_CHALLENGE_SECONDS = 300;
export const SIWX_STATEMENT = 'Read again a page this wallet paid for.';
export const SIWX_VERSION = '1' as const;
/** A header longer than this is no proof of ours (the nonce is 108 characters, the rest is small). */
export const MAX_SIWX_HEADER_LENGTH = 8192;

const SIWX_NONCE_MAC_DOMAIN = 'crawlgate siwx nonce v1\n';
const RANDOM_HEX = 32;
const EXP_HEX = 12;
const MAC_HEX = 64;
const NONCE = /^([0-9a-f]{32})([0-9a-f]{12})([0-9a-f]{64})$/;

export interface SiwxNonceScope {
  siteId: string;
  /** The path the proof may open, as core's requestPath() spells it. */
  path: string;
}

/** A fresh nonce for `scope`, answerable until `exp` (Unix seconds). */
export function signSiwxNonce(scope: SiwxNonceScope, exp: number, secret: string): string {
  if (typeof secret !== 'string' || secret === '') throw new TypeError('SIWX nonce secret must be a non-empty string');
  if (!Number.isSafeInteger(exp) || exp < 0) throw new TypeError('SIWX nonce exp must be Unix seconds');
  const random = bytesToHex(randomBytes(RANDOM_HEX / 2));
  return random + exp.toString(16).padStart(EXP_HEX, '0') + bytesToHex(nonceMac(scope, random, exp, secret));
}

export type SiwxNonceCheck =
  { valid: true; exp: number } | { valid: false; reason: 'malformed' | 'bad_signature' | 'expired' | 'too_long' };

/**
 * Whether `nonce` was signed for `scope` with one of `secrets`, is not past its `exp`, and lasts
 * no longer than a challenge does (SIWX_CHALLENGE_SECONDS, beside the clocks' allowed skew): the
 * API keeps a spent nonce until its expiry.
 */
export function verifySiwxNonce(
  nonce: unknown,
  scope: SiwxNonceScope,
  secrets: readonly string[],
  now = Math.floor(Date.now() / 1000),
): SiwxNonceCheck {
  const parts = typeof nonce === 'string' ? NONCE.exec(nonce) : null;
  if (!parts) return { valid: false, reason: 'malformed' };
  const [, random, expHex, macHex] = parts;
  const exp = parseInt(expHex, 16);
  const mac = hexToBytes(macHex);
  const signed = secrets.some(
    (secret) => secret !== '' && constantTimeEqual(nonceMac(scope, random, exp, secret), mac),
  );
  if (!signed) return { valid: false, reason: 'bad_signature' };
  if (exp <= now) return { valid: false, reason: 'expired' };
  if (exp > now + SIWX_CHALLENGE_SECONDS + ACCESS_TOKEN_CLOCK_SKEW_SECONDS) return { valid: false, reason: 'too_long' };
  return { valid: true, exp };
}

export interface SiwxChallengeTerms {
  /** The site's domain (host), as the request names it. */
  domain: string;
  /** The path the challenge is for. */
  path: string;
  /** CAIP-2 chain id, e.g. "eip155:8453". */
  caip2: string;
  nonce: string;
  /** Unix seconds: the nonce's expiry. */
  exp: number;
}

/**
 * The message fields a proof for these terms must have signed (all but the address). The middleware
 * builds its challenge and the API its check with this one function, so both name the same URI.
 */
export function siwxMessageFields(terms: SiwxChallengeTerms) {
  return {
    domain: terms.domain,
    uri: `https://${terms.domain}${uriPath(terms.path)}`,
    statement: SIWX_STATEMENT,
    version: SIWX_VERSION,
    nonce: terms.nonce,
    issuedAt: new Date((terms.exp - SIWX_CHALLENGE_SECONDS) * 1000).toISOString(),
    expirationTime: new Date(terms.exp * 1000).toISOString(),
  };
}

/** A "%XX" escape, or one character RFC 3986 lets no path hold as it is: not a pchar, nor "/". */
const NOT_URI_PATH = /%[0-9A-Fa-f]{2}|[^A-Za-z0-9\-._~!$&'()*+,;=:@/]/gu;

/**
 * `path` as a URI's path. The path a sign-in binds is core's requestPath() spelling, which is
 * decoded ("/café", "/a b", "/a?b"): a URI cannot hold it, and viem's createSiweMessage and x402's
 * client throw on it. Every character outside RFC 3986's pchar and "/" is percent-encoded (UTF-8);
 * escapes already there (requestPath() keeps "%2F", "%25") stay as they are. Only the message's URI
 * is spelled so: the nonce binds the path itself.
 */
function uriPath(path: string): string {
  return path.replace(NOT_URI_PATH, (match) =>
    match.length === 3 && match[0] === '%' ? match : percentEncoded(match),
  );
}

function percentEncoded(character: string): string {
  let out = '';
  for (const byte of utf8Encode(character)) out += '%' + byte.toString(16).toUpperCase().padStart(2, '0');
  return out;
}

/** What PAYMENT-REQUIRED's `extensions['sign-in-with-x']` holds: the challenge, the chain, the proof's schema. */
export function siwxDeclaration(terms: SiwxChallengeTerms) {
  return {
    info: siwxMessageFields(terms),
    supportedChains: [{ chainId: terms.caip2, type: 'eip191' as const }],
    schema: SIWX_PROOF_SCHEMA,
  };
}

/** The fields of a SIGN-IN-WITH-X proof the API reads; the rest it rebuilds. */
export interface SiwxProof {
  address: `0x${string}`;
  signature: `0x${string}`;
  nonce: string;
  domain: string;
  uri: string;
  chainId: string;
}

/** The proof in a SIGN-IN-WITH-X header (base64 JSON), null when it is not one. */
export function readSiwxProof(header: unknown): SiwxProof | null {
  if (typeof header !== 'string' || header.length > MAX_SIWX_HEADER_LENGTH) return null;
  const proof = decodeBase64Json(header.trim());
  if (typeof proof !== 'object' || proof === null || Array.isArray(proof)) return null;
  const { address, signature, nonce, domain, uri, chainId } = proof as Record<string, unknown>;
  if (!isEvmAddress(address) || typeof signature !== 'string' || !HEX_BYTES.test(signature)) return null;
  if (typeof nonce !== 'string' || typeof domain !== 'string' || typeof uri !== 'string' || typeof chainId !== 'string')
    return null;
  return { address: address as `0x${string}`, signature: signature as `0x${string}`, nonce, domain, uri, chainId };
}

/** The same JSON Schema @x402/extensions' buildSIWxSchema() declares. */
const SIWX_PROOF_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    domain: { type: 'string' },
    address: { type: 'string' },
    statement: { type: 'string' },
    uri: { type: 'string', format: 'uri' },
    version: { type: 'string' },
    chainId: { type: 'string' },
    type: { type: 'string' },
    nonce: { type: 'string' },
    issuedAt: { type: 'string', format: 'date-time' },
    expirationTime: { type: 'string', format: 'date-time' },
    notBefore: { type: 'string', format: 'date-time' },
    requestId: { type: 'string' },
    resources: { type: 'array', items: { type: 'string', format: 'uri' } },
    signature: { type: 'string' },
  },
  required: ['domain', 'address', 'uri', 'version', 'chainId', 'type', 'nonce', 'issuedAt', 'signature'],
};

function nonceMac(scope: SiwxNonceScope, random: string, exp: number, secret: string): Uint8Array {
  return hmacSha256(secret, SIWX_NONCE_MAC_DOMAIN + JSON.stringify([scope.siteId, scope.path, random, exp]));
}

export const SIWX_NONCE_LENGTH = RANDOM_HEX + EXP_HEX + MAC_HEX;

/** POST /v1/access-tokens/siwx: the middleware forwards a proof for the path it guards. */
export interface SiwxAccessRequest {
  /** The SIGN-IN-WITH-X header as the client sent it. */
  proof: string;
  /** The path the middleware would serve, as core's requestPath() spells it. */
  url: string;
  /**
   * The visitor's IP address as the middleware saw it, when it knows it: the API counts sign-ins
   * per visitor then, so proofs sent from elsewhere (posing under a payer's public address) never
   * hold that payer off.
   */
  client_ip?: string;
}

/** Its 200: the token the wallet's payment for that path was given, unchanged (same exp). */
export interface SiwxAccess {
  access_token: string;
  expires_at: string;
  url: string;
  payer: string;
}
