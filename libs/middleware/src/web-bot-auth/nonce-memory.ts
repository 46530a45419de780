/*
 * The nonces of signatures already accepted, each kept until its signature expires, so a signed
 * request replayed within its validity window is refused. Bounded: when the memory is full of
 * nonces still valid, a new one cannot be remembered and its request is not verified (refusing is
 * safe; forgetting an old nonce would let its request be replayed). One signer (a Signature-Agent
 * origin) may hold only a share of the memory, so an agent with a key of its own cannot fill it
 * and leave every other agent unverified. Origins cost nothing to invent, so known signers (the
 * catalogue's, and those the site names) have half of the memory to themselves: a crowd of invented
 * origins fills only the other half. Keys are hashed, so a long nonce costs what a short one does.
 */

import { base64urlEncode, utf8Encode } from '@crawlgate/core';
import { sha256 } from '@noble/hashes/sha2';
import { createExpiryQueue } from './expiry-queue';

export type NonceAnswer = 'fresh' | 'replayed' | 'full';

/** The key a signer's nonce is kept by, here and in a shared ReplayStore: hashed, so a long nonce costs what a short one does. */
export function replayKey(signer: string, key: string): string {
  return base64urlEncode(sha256(utf8Encode(`${signer}\n${key}`)));
}

export interface NonceMemory {
  /** Remembers `key` of `signer` until `expiresAtMs`; 'replayed' if it is remembered already, 'full' if it cannot be. */
  remember(signer: string, key: string, expiresAtMs: number): NonceAnswer;
  readonly size: number;
}

/**
 * `signerShare`: the part of its pool one signer may hold (default an eighth). `knownSigners`:
 * origins that share half of `capacity` among themselves (each an equal part of it), apart from
 * all others, who share the other half.
 */
export function createNonceMemory(
  capacity: number,
  now: () => number = Date.now,
  signerShare = 1 / 8,
  knownSigners: ReadonlySet<string> = new Set(),
): NonceMemory {
  if (knownSigners.size === 0 || capacity < 2)
    return createPool(capacity, now, Math.max(1, Math.floor(capacity * signerShare)));
  const knownCapacity = Math.floor(capacity / 2);
  const known = createPool(knownCapacity, now, Math.max(1, Math.floor(knownCapacity / knownSigners.size)));
  // One origin's share is of the pool it is in: of the whole, it would take four origins, not eight, to fill the others' half.
  const othersCapacity = capacity - knownCapacity;
  const others = createPool(othersCapacity, now, Math.max(1, Math.floor(othersCapacity * signerShare)));
  return {
    remember: (signer, key, expiresAtMs) =>
      (knownSigners.has(signer) ? known : others).remember(signer, key, expiresAtMs),
    get size() {
      return known.size + others.size;
    },
  };
}

/** One memory of `capacity` nonces, `perSigner` of them at most per signer. */
function createPool(capacity: number, now: () => number, perSigner: number): NonceMemory {
  const entries = new Map<string, { expiry: number; signer: string }>();
  const held = new Map<string, number>();
  // By expiry, so a sweep takes what expired and walks nothing else (expiry-queue.ts).
  const expiring = createExpiryQueue<string>();

  function sweep(at: number): void {
    expiring.takeExpired(at, (key, expiry) => {
      const entry = entries.get(key);
      // An entry remembered again since, under a later expiry, is not this one.
      if (entry === undefined || entry.expiry !== expiry) return;
      entries.delete(key);
      const left = (held.get(entry.signer) ?? 1) - 1;
      if (left > 0) held.set(entry.signer, left);
      else held.delete(entry.signer);
    });
  }

  return {
    remember(signer, key, expiresAtMs) {
      // An expiry the heap cannot order (NaN, infinite) would never be freed, nor ever count as expired.
      if (!Number.isFinite(expiresAtMs)) return 'full';
      const at = now();
      const hashed = replayKey(signer, key);
      const known = entries.get(hashed);
      if (known !== undefined && known.expiry > at) return 'replayed';
      sweep(at);
      if (entries.size >= capacity || (held.get(signer) ?? 0) >= perSigner) return 'full';
      entries.set(hashed, { expiry: expiresAtMs, signer });
      held.set(signer, (held.get(signer) ?? 0) + 1);
      expiring.add(hashed, expiresAtMs);
      return 'fresh';
    },
    get size() {
      return entries.size;
    },
  };
}
