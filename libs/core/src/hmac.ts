/*
 * HMAC-SHA256 under a text secret, the one MAC of access tokens and gates. Keyed states are cached:
 * keying hashes two pad blocks, so cloning a keyed state halves the work of each MAC. Bounded,
 * because secrets are few (a site's current and rotated ones) and no caller may grow it without limit.
 */

import { hmac } from '@noble/hashes/hmac';
import { sha256 } from '@noble/hashes/sha2';
import { utf8Encode } from './base64url';

const keyedStates = new Map<string, ReturnType<typeof hmac.create>>();
const MAX_KEYED_STATES = 64;

export function hmacSha256(secret: string, message: string): Uint8Array {
  let keyed = keyedStates.get(secret);
  if (!keyed) {
    if (keyedStates.size >= MAX_KEYED_STATES) keyedStates.clear();
    keyed = hmac.create(sha256, utf8Encode(secret));
    keyedStates.set(secret, keyed);
  }
  return keyed.clone().update(utf8Encode(message)).digest();
}
