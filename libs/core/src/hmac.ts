/*
 * HMAC-SHA256 under a text secret (RFC 2104), the one MAC of access tokens and gates, pure JS on
 * every runtime (sha256.ts says why it beats node:crypto here). Keying hashes the two pad blocks
 * once per secret; each MAC then starts from those states. Bounded, so no caller grows it without
 * limit: a middleware holds its site's one or two secrets, the API those of every site it serves,
 * and 64 made the API key again for nearly every gate once it served more sites (an entry holds two
 * small typed arrays and the secret: about half a kilobyte, 2 MB at the bound).
 */

import { binaryString, utf8Encode } from './base64url';
import {
  absorbBlock,
  BYTE_MAX,
  digestBytes,
  finishDigest,
  finishText,
  finishUnits,
  initialState,
  SHA256_BLOCK_BYTES,
} from './sha256';

/** The hash states after the key's inner and outer pad blocks. */
interface KeyedStates {
  inner: Int32Array;
  outer: Int32Array;
}

const keyedStates = new Map<string, KeyedStates>();
export const MAX_KEYED_STATES = 4096;
/** Where a message's hashing runs: a copy of a keyed state, so the cached one stays as it is. */
const working = new Int32Array(8);
const innerDigest = new Int32Array(8);

/** HMAC-SHA256 of the UTF-8 of `message` under the UTF-8 of `secret`. */
export function hmacSha256(secret: string, message: string): Uint8Array {
  // Read as code units, anything else with a length would hash like some string: refused instead.
  if (typeof message !== 'string' || typeof secret !== 'string') throw new TypeError('hmacSha256 takes strings');
  const keyed = keyedStatesOf(secret);
  working.set(keyed.inner);
  finishText(working, keyed.inner, SHA256_BLOCK_BYTES, message);
  innerDigest.set(working);
  working.set(keyed.outer);
  finishDigest(working, SHA256_BLOCK_BYTES, innerDigest);
  return digestBytes(working);
}

function keyedStatesOf(secret: string): KeyedStates {
  let keyed = keyedStates.get(secret);
  if (!keyed) {
    if (keyedStates.size >= MAX_KEYED_STATES) keyedStates.clear();
    keyed = keyWith(utf8Encode(secret));
    keyedStates.set(secret, keyed);
  }
  return keyed;
}

/** RFC 2104: a key longer than a block is hashed first; then zero-padded and XORed with 0x36 and 0x5c. */
function keyWith(secret: Uint8Array): KeyedStates {
  let key = secret;
  if (key.length > SHA256_BLOCK_BYTES) {
    const state = initialState();
    finishUnits(state, 0, binaryString(key), BYTE_MAX);
    key = digestBytes(state);
  }
  const padded = (byte: number) => {
    const block = new Uint8Array(SHA256_BLOCK_BYTES).fill(byte);
    for (let i = 0; i < key.length; i++) block[i] = key[i] ^ byte;
    const state = initialState();
    absorbBlock(state, block);
    return state;
  };
  return { inner: padded(0x36), outer: padded(0x5c) };
}
