/*
 * SHA-256 (FIPS 180-4), written for the jobs it has here: the HMAC of access tokens and gates, a
 * few hundred bytes at a time on every paid request, and the hash a site token or API key is
 * looked up by on every API call. It keeps its state in 32-bit words and
 * reads ASCII text straight from the string, so a MAC allocates nothing but its result; at these
 * sizes that makes it faster than node:crypto, whose fixed cost per call (an object, a trip into
 * C++) is larger than the hashing. Pure JS, so every runtime gets the same code.
 */

import { binaryString, utf8Encode } from './base64url';

/** The round constants K (FIPS 180-4, 4.2.2). */
const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

/** The initial hash value H(0) (FIPS 180-4, 5.3.3). */
const INITIAL_STATE = new Int32Array([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
]);

export const SHA256_BLOCK_BYTES = 64;
export const ASCII_MAX = 0x7f;
export const BYTE_MAX = 0xff;
export const SHA256_DIGEST_BYTES = 32;

/** A fresh state: eight 32-bit words, H(0). */
export function initialState(): Int32Array {
  return INITIAL_STATE.slice();
}

/**
 * The message schedule, shared: JavaScript runs one hash at a time, and nothing here awaits or
 * calls out, so no second hash can start while one is using it.
 */
const w = new Int32Array(64);

/** Folds the block whose 16 big-endian words are in w[0..15] into state. */
function compress(state: Int32Array): void {
  for (let i = 16; i < 64; i++) {
    const x = w[i - 15];
    const y = w[i - 2];
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
    w[i] = (w[i - 16] + s0 + w[i - 7] + s1) | 0;
  }
  let a = state[0];
  let b = state[1];
  let c = state[2];
  let d = state[3];
  let e = state[4];
  let f = state[5];
  let g = state[6];
  let h = state[7];
  let t: number;
  // FIPS 180-4 6.2.2 step 3, eight rounds per pass with the working variables renamed instead of
  // moved (this round's h is the next one's g, and so on): 15 % faster on a token's MAC.
  for (let i = 0; i < 64; i += 8) {
    // prettier-ignore
    {
      t = ((h + bigSigma1(e) + (g ^ (e & (f ^ g))) + K[i + 0] + w[i + 0]) | 0); d = (d + t) | 0; h = (t + bigSigma0(a) + ((a & b) | (c & (a | b)))) | 0;
      t = ((g + bigSigma1(d) + (f ^ (d & (e ^ f))) + K[i + 1] + w[i + 1]) | 0); c = (c + t) | 0; g = (t + bigSigma0(h) + ((h & a) | (b & (h | a)))) | 0;
      t = ((f + bigSigma1(c) + (e ^ (c & (d ^ e))) + K[i + 2] + w[i + 2]) | 0); b = (b + t) | 0; f = (t + bigSigma0(g) + ((g & h) | (a & (g | h)))) | 0;
      t = ((e + bigSigma1(b) + (d ^ (b & (c ^ d))) + K[i + 3] + w[i + 3]) | 0); a = (a + t) | 0; e = (t + bigSigma0(f) + ((f & g) | (h & (f | g)))) | 0;
      t = ((d + bigSigma1(a) + (c ^ (a & (b ^ c))) + K[i + 4] + w[i + 4]) | 0); h = (h + t) | 0; d = (t + bigSigma0(e) + ((e & f) | (g & (e | f)))) | 0;
      t = ((c + bigSigma1(h) + (b ^ (h & (a ^ b))) + K[i + 5] + w[i + 5]) | 0); g = (g + t) | 0; c = (t + bigSigma0(d) + ((d & e) | (f & (d | e)))) | 0;
      t = ((b + bigSigma1(g) + (a ^ (g & (h ^ a))) + K[i + 6] + w[i + 6]) | 0); f = (f + t) | 0; b = (t + bigSigma0(c) + ((c & d) | (e & (c | d)))) | 0;
      t = ((a + bigSigma1(f) + (h ^ (f & (g ^ h))) + K[i + 7] + w[i + 7]) | 0); e = (e + t) | 0; a = (t + bigSigma0(b) + ((b & c) | (d & (b | c)))) | 0;
    }
  }
  state[0] = (state[0] + a) | 0;
  state[1] = (state[1] + b) | 0;
  state[2] = (state[2] + c) | 0;
  state[3] = (state[3] + d) | 0;
  state[4] = (state[4] + e) | 0;
  state[5] = (state[5] + f) | 0;
  state[6] = (state[6] + g) | 0;
  state[7] = (state[7] + h) | 0;
}

function bigSigma0(x: number): number {
  return ((x >>> 2) | (x << 30)) ^ ((x >>> 13) | (x << 19)) ^ ((x >>> 22) | (x << 10));
}

function bigSigma1(x: number): number {
  return ((x >>> 6) | (x << 26)) ^ ((x >>> 11) | (x << 21)) ^ ((x >>> 25) | (x << 7));
}

/**
 * Hashes `units` into `state`, which has already absorbed `before` bytes (whole blocks), and pads:
 * state is then the digest. Each UTF-16 code unit of `units` is one byte, so this answers for
 * ASCII text (its own UTF-8; maxUnit 0x7f) and for binary strings (maxUnit 0xff): false, with
 * state spoiled, as soon as a code unit above maxUnit shows.
 */
export function finishUnits(state: Int32Array, before: number, units: string, maxUnit: number): boolean {
  const length = units.length;
  let at = 0;
  let seen = 0;
  for (; at + SHA256_BLOCK_BYTES <= length; at += SHA256_BLOCK_BYTES) {
    for (let i = 0; i < 16; i++) {
      const p = at + 4 * i;
      const a = units.charCodeAt(p);
      const b = units.charCodeAt(p + 1);
      const c = units.charCodeAt(p + 2);
      const d = units.charCodeAt(p + 3);
      seen |= a | b | c | d;
      w[i] = (a << 24) | (b << 16) | (c << 8) | d;
    }
    if (seen > maxUnit) return false;
    compress(state);
  }
  w.fill(0, 0, 16);
  for (let n = 0; at < length; at++, n++) {
    const code = units.charCodeAt(at);
    if (code > maxUnit) return false;
    w[n >> 2] |= code << (24 - 8 * (n & 3));
  }
  pad(state, length % SHA256_BLOCK_BYTES, before + length);
  return true;
}

/**
 * Hashes the UTF-8 of `text` into `state` as finishUnits does: ASCII text is its own UTF-8 and is
 * read as it is, other text is encoded first. `state` must still be as it was before (it is reset
 * from `from` when ASCII reading fails part way).
 */
export function finishText(state: Int32Array, from: Int32Array, before: number, text: string): void {
  if (finishUnits(state, before, text, ASCII_MAX)) return;
  state.set(from);
  finishUnits(state, before, binaryString(utf8Encode(text)), BYTE_MAX);
}

/** SHA-256 of the UTF-8 of `text`. */
export function sha256Text(text: string): Uint8Array {
  if (typeof text !== 'string') throw new TypeError('sha256Text takes a string');
  const state = initialState();
  finishText(state, INITIAL_STATE, 0, text);
  return digestBytes(state);
}

/** Folds one block of bytes (64 of them) into state, with no padding: keying an HMAC. */
export function absorbBlock(state: Int32Array, block: Uint8Array): void {
  for (let i = 0; i < 16; i++) {
    const p = 4 * i;
    w[i] = (block[p] << 24) | (block[p + 1] << 16) | (block[p + 2] << 8) | block[p + 3];
  }
  compress(state);
}

/** Folds a 32-byte digest, held as state words, into state as the whole rest of a message of `before` + 32 bytes. */
export function finishDigest(state: Int32Array, before: number, digest: Int32Array): void {
  w.set(digest.subarray(0, 8));
  w.fill(0, 8, 16);
  pad(state, SHA256_DIGEST_BYTES, before + SHA256_DIGEST_BYTES);
}

/** `filled` bytes of the last block are in w already: then 0x80, zeros, and the length in bits. */
function pad(state: Int32Array, filled: number, totalBytes: number): void {
  w[filled >> 2] |= 0x80 << (24 - 8 * (filled & 3));
  if (filled >= 56) {
    compress(state);
    w.fill(0, 0, 16);
  }
  // 64-bit big-endian bit count; messages here are far below 2^53 bits.
  w[14] = Math.floor(totalBytes / 0x20000000);
  w[15] = (totalBytes * 8) | 0;
  compress(state);
}

/** The digest's bytes, big-endian, from the state's words. */
export function digestBytes(state: Int32Array): Uint8Array {
  const out = new Uint8Array(SHA256_DIGEST_BYTES);
  for (let i = 0; i < 8; i++) {
    const word = state[i];
    out[4 * i] = word >>> 24;
    out[4 * i + 1] = word >>> 16;
    out[4 * i + 2] = word >>> 8;
    out[4 * i + 3] = word;
  }
  return out;
}
