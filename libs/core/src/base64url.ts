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

// eslint-disable-next-line no-control-regex -- every ASCII code, controls included, is the point
const ASCII = /^[\x00-\x7f]*$/;

const encoder = new TextEncoder();
// fatal: invalid UTF-8 is an error, not U+FFFD. ignoreBOM: a leading BOM is kept, so decoding never drops bytes.
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function base64urlEncode(bytes: Uint8Array): string {
  return encode(bytes, URL_SAFE);
}

/** base64urlEncode(utf8Encode(text)); ASCII text, its own UTF-8, goes to btoa as is. */
export function base64urlEncodeUtf8(text: string): string {
  if (NOT_ASCII.test(text)) return base64urlEncode(utf8Encode(text));
  const encoded = btoa(text);
  const end = encoded.indexOf('=');
  return (end < 0 ? encoded : encoded.slice(0, end)).replaceAll('+', '-').replaceAll('/', '_');
}

/**
 * Strict base64url: only `[A-Za-z0-9_-]`, no padding, no whitespace, and the unused low bits of
 * the last character must be zero. Anything else is null.
 */
export function base64urlDecode(text: string): Uint8Array | null {
  return decode(text, URL_SAFE_VALUES);
}

/**
 * utf8Decode(base64urlDecode(text)), with the same strictness, in fewer steps: checked here, then
 * decoded by atob in native code; text that decodes to ASCII is its own UTF-8 (most JSON is).
 */
export function base64urlDecodeUtf8(text: string): string | null {
  const rest = text.length % 4;
  if (rest === 1 || !URL_SAFE_TEXT.test(text)) return null;
  // The unused low bits of the last character must be zero (rest 2: four bits, rest 3: two).
  if (rest !== 0 && (URL_SAFE_VALUES[text.charCodeAt(text.length - 1)] & (rest === 2 ? 15 : 3)) !== 0) return null;
  const binary = atob(text.replaceAll('-', '+').replaceAll('_', '/'));
  if (!NOT_ASCII.test(binary)) return binary;
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return utf8Decode(bytes);
}

const URL_SAFE_TEXT = /^[A-Za-z0-9_-]*$/;
// eslint-disable-next-line no-control-regex -- every ASCII code, controls included, is the point
const NOT_ASCII = /[^\x00-\x7f]/;

export function utf8Encode(s: string): Uint8Array {
  return encoder.encode(s);
}

/** The UTF-8 bytes of `s`, counted with no encoding when it is ASCII (its own UTF-8). */
export function utf8ByteLength(s: string): number {
  return NOT_ASCII.test(s) ? encoder.encode(s).length : s.length;
}

/** Whether `s` is all ASCII (controls included). */
export const isAscii = (s: string): boolean => ASCII.test(s);

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
  // Where there is a Buffer (Node, Bun, Deno), it encodes in native code: btoa of a 402's
  // PAYMENT-REQUIRED (2 KB of JSON) was the largest cost of the gate's 402 in a profile.
  const buffer = (globalThis as { Buffer?: NodeLikeBuffer }).Buffer;
  if (buffer) return buffer.from(json, 'utf8').toString('base64');
  // JSON of ASCII text is its own UTF-8: btoa takes it as is (and pads).
  return ASCII.test(json) ? btoa(json) : btoa(binaryString(utf8Encode(json)));
}

/** The one use of Buffer here, when the runtime has it: UTF-8 text to standard padded base64. */
interface NodeLikeBuffer {
  from(text: string, encoding: 'utf8'): { toString(encoding: 'base64'): string };
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

/**
 * Unpadded base64 of `bytes` in the given alphabet. btoa (every runtime has it) does the work in
 * native code, many times faster than a loop here; it takes a "binary string", one char per byte.
 */
function encode(bytes: Uint8Array, alphabet: string): string {
  const text = btoa(binaryString(bytes));
  const end = text.indexOf('=');
  const unpadded = end < 0 ? text : text.slice(0, end);
  return alphabet === STANDARD ? unpadded : unpadded.replaceAll('+', '-').replaceAll('/', '_');
}
/** Bytes per String.fromCharCode call: well under any engine's argument limit. */
const CHUNK = 8192;

/** One char per byte (what btoa takes, and what sha256.ts hashes byte for byte). */
export function binaryString(bytes: Uint8Array): string {
  if (bytes.length <= CHUNK) return String.fromCharCode.apply(null, bytes as unknown as number[]);
  let out = '';
  for (let i = 0; i < bytes.length; i += CHUNK)
    out += String.fromCharCode.apply(null, bytes.subarray(i, i + CHUNK) as unknown as number[]);
  return out;
}

/** Decodes unpadded base64; null on a character outside the alphabet or a non-canonical ending. */
function decode(text: string, values: Int8Array): Uint8Array | null {
  // One leftover character carries 6 bits: never a whole byte, so no encoder writes it.
  const rest = text.length % 4;
  if (rest === 1) return null;
  const out = new Uint8Array(Math.floor((text.length * 3) / 4));
  const whole = text.length - rest;
  let o = 0;
  // Four characters, three bytes at a time. A character outside the table reads -1, which makes
  // the OR of the four negative; one above 127 is caught by the same test (the table ends at 127).
  for (let i = 0; i < whole; i += 4) {
    const a = value(text.charCodeAt(i), values);
    const b = value(text.charCodeAt(i + 1), values);
    const c = value(text.charCodeAt(i + 2), values);
    const d = value(text.charCodeAt(i + 3), values);
    if ((a | b | c | d) < 0) return null;
    const n = (a << 18) | (b << 12) | (c << 6) | d;
    out[o++] = n >> 16;
    out[o++] = (n >> 8) & 255;
    out[o++] = n & 255;
  }
  if (rest === 0) return out;
  const a = value(text.charCodeAt(whole), values);
  const b = value(text.charCodeAt(whole + 1), values);
  const c = rest === 3 ? value(text.charCodeAt(whole + 2), values) : 0;
  if ((a | b | c) < 0) return null;
  const n = (a << 18) | (b << 12) | (c << 6);
  out[o++] = n >> 16;
  if (rest === 3) out[o] = (n >> 8) & 255;
  // Leftover low bits must be zero, otherwise several texts would decode to the same bytes.
  return (rest === 2 ? n & 0xffff : n & 0xff) === 0 ? out : null;
}

const value = (code: number, values: Int8Array) => (code < 128 ? values[code] : -1);

/** Standard base64 with padding, as RFC 8941 byte sequences (and HTTP signatures) carry bytes. */
export function base64Encode(bytes: Uint8Array): string {
  return btoa(binaryString(bytes));
}

/**
 * Standard base64; padding may be present (then it must be correct) or not. Null on any other
 * character or a non-canonical ending, so one text means one byte string.
 */
export function base64Decode(text: string): Uint8Array | null {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x3d /* = */) end--;
  const padding = text.length - end;
  if (padding > 0 && (padding > 2 || text.length % 4 !== 0)) return null;
  return decode(text.slice(0, end), STANDARD_VALUES);
}
