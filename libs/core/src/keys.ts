/*
 * Credential formats and randomness. Keys are "<prefix><43 base64url chars>" (32 random bytes);
 * the service stores only sha256Hex() of them. Randomness comes from globalThis.crypto, present
 * in Node ≥ 19, Deno, Bun, browsers and edge runtimes.
 */

import { keccak_256 } from '@noble/hashes/sha3';
import { bytesToHex } from '@noble/hashes/utils';
import { base64urlEncode } from './base64url';
import { sha256Text } from './sha256';

export const API_KEY_PREFIX = 'xk_pub_';
export const SITE_TOKEN_PREFIX = 'st_';
export const ACCESS_TOKEN_SECRET_PREFIX = 'cgsec_';

// getRandomValues fills at most 65,536 bytes per call.
const RANDOM_CHUNK = 65_536;
const KEY_BODY = /^[A-Za-z0-9_-]{43}$/;
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

// Small requests are served from a pool filled by one getRandomValues call (as Node's randomUUID
// does): a call per 16 bytes showed in the profile of the gate's 402s. Each byte is handed out once.
const POOL_BYTES = 4096;
const POOLED_AT_MOST = 256;
let pool = new Uint8Array(0);
let poolUsed = 0;

export function randomBytes(n: number): Uint8Array {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`Byte count must be a non-negative integer, got ${n}`);
  if (n <= POOLED_AT_MOST) {
    if (poolUsed + n > pool.length) {
      pool = globalThis.crypto.getRandomValues(new Uint8Array(POOL_BYTES));
      poolUsed = 0;
    }
    const bytes = pool.slice(poolUsed, poolUsed + n);
    poolUsed += n;
    return bytes;
  }
  const bytes = new Uint8Array(n);
  for (let i = 0; i < n; i += RANDOM_CHUNK) globalThis.crypto.getRandomValues(bytes.subarray(i, i + RANDOM_CHUNK));
  return bytes;
}

/** 32 random bytes as 0x-prefixed hex, e.g. an EIP-3009 nonce. */
export function randomHex32(): `0x${string}` {
  return `0x${bytesToHex(randomBytes(32))}`;
}

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomKeyBody();
}

export function generateSiteToken(): string {
  return SITE_TOKEN_PREFIX + randomKeyBody();
}

export function generateAccessTokenSecret(): string {
  return ACCESS_TOKEN_SECRET_PREFIX + randomKeyBody();
}

export function isApiKeyFormat(s: unknown): s is string {
  return hasKeyFormat(s, API_KEY_PREFIX);
}

export function isSiteTokenFormat(s: unknown): s is string {
  return hasKeyFormat(s, SITE_TOKEN_PREFIX);
}

export function isAccessTokenSecretFormat(s: unknown): s is string {
  return hasKeyFormat(s, ACCESS_TOKEN_SECRET_PREFIX);
}

/** Lower-case hex SHA-256 of the UTF-8 text: how API keys and site tokens are stored. */
export function sha256Hex(text: string): string {
  return bytesToHex(sha256Text(text));
}

/** "0x" + 40 hex digits, any case. The EIP-55 checksum is not checked: addresses are lookup keys here. */
export function isEvmAddress(s: unknown): s is string {
  return typeof s === 'string' && EVM_ADDRESS.test(s);
}

/**
 * An address a publisher may be paid at: an EVM address, not the zero address (a transfer to it
 * reverts), whose EIP-55 checksum holds when it is written in mixed case (a typo in a checksummed
 * address would pay a wallet nobody holds). All lower or all upper case carries no checksum.
 */
export function isPayoutAddress(s: unknown): s is string {
  return isEvmAddress(s) && !/^0x0+$/.test(s) && (s === `0x${s.slice(2).toUpperCase()}` || holdsEip55Checksum(s));
}

/**
 * Whether an EVM address is spelt as viem takes it where it hashes one (typed data): all lower case
 * (no checksum), or mixed case that is its EIP-55 checksum. Any other spelling, all upper case
 * included, is refused before it gets there.
 */
export function holdsEip55Checksum(address: string): boolean {
  const hex = address.slice(2);
  const lower = hex.toLowerCase();
  return hex === lower || hex === eip55Checksummed(lower);
}

/** EIP-55: a letter is upper case where the Keccak-256 of the lower-case hex has a nibble of 8 or more. */
function eip55Checksummed(lowerHex: string): string {
  const hash = bytesToHex(keccak_256(new TextEncoder().encode(lowerHex)));
  let out = '';
  for (let i = 0; i < lowerHex.length; i++) out += parseInt(hash[i], 16) >= 8 ? lowerHex[i].toUpperCase() : lowerHex[i];
  return out;
}

/** Lower-cases an address so every spelling finds the same record. Throws TypeError on a non-address. */
export function normalizeEvmAddress(s: string): `0x${string}` {
  if (!isEvmAddress(s)) throw new TypeError('Not an EVM address: expected 0x followed by 40 hexadecimal characters');
  return s.toLowerCase() as `0x${string}`;
}

function randomKeyBody(): string {
  return base64urlEncode(randomBytes(32));
}

function hasKeyFormat(s: unknown, prefix: string): s is string {
  return typeof s === 'string' && s.startsWith(prefix) && KEY_BODY.test(s.slice(prefix.length));
}
