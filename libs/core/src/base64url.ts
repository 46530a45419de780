/*
 * Base64 codecs without Buffer, so core runs on every runtime (Node, Deno, Bun, edge workers).
 * base64url is the strict, canonical form used in access tokens: exactly one text per byte string,
 * so a token cannot be re-spelled without changing its bytes. Standard base64 carries the x402
 * headers (X-PAYMENT, PAYMENT-REQUIRED, PAYMENT-SIGNATURE, PAYMENT-RESPONSE), as the x402 clients
 * write them with btoa / Buffer.
 */

const STANDARD = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const URL_SAFE = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

const STANDARD_VALUES = valueTable(STANDARD);
const URL_SAFE_VALUES = valueTable(URL_SAFE);

const encoder = new TextEncoder();
// fatal: invalid UTF-8 is an error, not U+FFFD. ignoreBOM: a leading BOM is kept, so decoding never drops bytes.
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function base64urlEncode(bytes: Uint8Array): string {
  return encode(bytes, URL_SAFE);
}

/**
 * Strict base64url: only `[A-Za-z0-9_-]`, no padding, no whitespace, and the unused low bits of
 * the last character must be zero. Anything else is null.
 */
export function base64urlDecode(text: string): Uint8Array | null {
  return decode(text, URL_SAFE_VALUES);
}

export function utf8Encode(s: string): Uint8Array {
  return encoder.encode(s);
}

/** Null for bytes that are not valid UTF-8. */
export function utf8Decode(b: Uint8Array): string | null {
  try {
    return decoder.decode(b);
  } catch {
    return null;
  }
}

/** Standard base64 (with padding) of the UTF-8 JSON text of `value`, as x402 headers carry it. */
export function encodeBase64Json(value: unknown): string {
  const json = JSON.stringify(value);
  if (json === undefined) throw new TypeError('Value has no JSON representation');
  const text = encode(utf8Encode(json), STANDARD);
  return text + '='.repeat((4 - (text.length % 4)) % 4);
}

/**
 * Reads standard base64 of UTF-8 JSON; padding may be present (then it must be correct) or not.
 * Undefined when the base64, the UTF-8 or the JSON is invalid.
 */
export function decodeBase64Json(text: string): unknown | undefined {
  if (typeof text !== 'string') return undefined;
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x3d /* = */) end--;
  const padding = text.length - end;
  if (padding > 0 && (padding > 2 || text.length % 4 !== 0)) return undefined;
  const bytes = decode(text.slice(0, end), STANDARD_VALUES);
  const json = bytes && utf8Decode(bytes);
  if (json == null) return undefined;
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return undefined;
  }
}

function valueTable(alphabet: string): Int8Array {
  const table = new Int8Array(128).fill(-1);
  for (let i = 0; i < alphabet.length; i++) table[alphabet.charCodeAt(i)] = i;
  return table;
}

/** Unpadded base64 of `bytes` in the given alphabet. */
function encode(bytes: Uint8Array, alphabet: string): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    out += alphabet[n >> 18] + alphabet[(n >> 12) & 63] + alphabet[(n >> 6) & 63] + alphabet[n & 63];
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i] << 16;
    out += alphabet[n >> 18] + alphabet[(n >> 12) & 63];
  } else if (rest === 2) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8);
    out += alphabet[n >> 18] + alphabet[(n >> 12) & 63] + alphabet[(n >> 6) & 63];
  }
  return out;
}

/** Decodes unpadded base64; null on a character outside the alphabet or a non-canonical ending. */
function decode(text: string, values: Int8Array): Uint8Array | null {
  // One leftover character carries 6 bits: never a whole byte, so no encoder writes it.
  if (text.length % 4 === 1) return null;
  const out = new Uint8Array(Math.floor((text.length * 3) / 4));
  let acc = 0;
  let bits = 0;
  let o = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const v = c < 128 ? values[c] : -1;
    if (v < 0) return null;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = acc >> bits;
      acc &= (1 << bits) - 1;
    }
  }
  // Leftover low bits must be zero, otherwise several texts would decode to the same bytes.
  return acc === 0 ? out : null;
}
