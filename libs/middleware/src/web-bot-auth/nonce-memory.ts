/*
 * The nonces of signatures already accepted, each kept until its signature expires, so a signed
 * request replayed within its validity window is refused. Bounded: when the memory is full of
 * nonces still valid, a new one cannot be remembered and its request is not verified (refusing is
 * safe; forgetting an old nonce would let its request be replayed). Keys are hashed, so a long
 * nonce costs the same as a short one.
 */

import { base64urlEncode, utf8Encode } from '@crawlgate/core';
import { sha256 } from '@noble/hashes/sha2';

export type NonceAnswer = 'fresh' | 'replayed' | 'full';

export interface NonceMemory {
  /** Remembers `key` until `expiresAtMs`; 'replayed' if it is remembered already, 'full' if it cannot be. */
  remember(key: string, expiresAtMs: number): NonceAnswer;
  readonly size: number;
}

export function createNonceMemory(capacity: number, now: () => number = Date.now): NonceMemory {
  const expiries = new Map<string, number>();
  /** No entry expires before this: a sweep before then would free nothing. */
  let nextExpiry = Infinity;

  function sweep(at: number): void {
    if (at < nextExpiry) return;
    nextExpiry = Infinity;
    for (const [key, expiry] of expiries) {
      if (expiry <= at) expiries.delete(key);
      else nextExpiry = Math.min(nextExpiry, expiry);
    }
  }

  return {
    remember(key, expiresAtMs) {
      const at = now();
      const hashed = base64urlEncode(sha256(utf8Encode(key)));
      const known = expiries.get(hashed);
      if (known !== undefined && known > at) return 'replayed';
      if (expiries.size >= capacity) sweep(at);
      if (expiries.size >= capacity && known === undefined) return 'full';
      expiries.set(hashed, expiresAtMs);
      nextExpiry = Math.min(nextExpiry, expiresAtMs);
      return 'fresh';
    },
    get size() {
      return expiries.size;
    },
  };
}
