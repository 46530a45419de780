/*
 * HMAC-SHA256 under a text secret, the one MAC of access tokens and gates. Keyed states are cached:
 * keying hashes two pad blocks, so cloning a keyed state halves the work of each MAC. Bounded,
 * because secrets are few (a site's current and rotated ones) and no caller may grow it without limit.
 */

import { hmac } from '@noble/hashes/hmac';
import { sha256 } from '@noble/hashes/sha2';
import { utf8Encode } from './base64url';

/**
 * HMAC-SHA256 of the UTF-8 of `message` under the UTF-8 of `secret`. Token and gate checks take
 * one, so a runtime with native crypto (Node's node:crypto) can supply its own; the default is
 * hmacSha256 below, pure JS, for every runtime.
 */
export type HmacSha256 = (secret: string, message: string) => Uint8Array;

/** The part of node:crypto's createHmac that hmacOf() needs, so core never imports node:crypto. */
export type CreateHmac = (algorithm: 'sha256', key: string) => { update(data: string): { digest(): Uint8Array } };

/** HMAC-SHA256 through a node:crypto-compatible createHmac (on Node several times faster than hmacSha256). */
export function hmacOf(createHmac: CreateHmac): HmacSha256 {
  return (secret, message) => createHmac('sha256', secret).update(message).digest();
}

const keyedStates = new Map<string, ReturnType<typeof hmac.create>>();
const MAX_KEYED_STATES = 64;

export const hmacSha256: HmacSha256 = (secret, message) => {
  let keyed = keyedStates.get(secret);
  if (!keyed) {
    if (keyedStates.size >= MAX_KEYED_STATES) keyedStates.clear();
    keyed = hmac.create(sha256, utf8Encode(secret));
    keyedStates.set(secret, keyed);
  }
  return keyed.clone().update(utf8Encode(message)).digest();
};
