/*
 * The one path a request is known by: rules price it, and an access token is bound to it. Pricing
 * and token checks must agree on it byte for byte, or a token paid for one path would unlock, or
 * fail on, a spelling of another.
 *
 * Steps: resolve the URL against http://localhost (so "/a/../b" is "/b", "\" is "/", and an
 * absolute URL keeps only its path; input starting with "/" is always a path, so "//host/x" is the
 * path "//host/x", not host "host"), drop query and fragment, collapse runs of "/" into one (as
 * nginx's merge_slashes does, so "/paid//x" cannot be priced apart from "/paid/x"), then
 * percent-decode, except:
 *   - %2F stays "%2F": an encoded slash never becomes a new segment ("/a%2Fb" is one segment);
 *   - %25 stays "%25": otherwise "%252F" would decode to text equal to an encoded slash;
 *   - bytes that are not valid UTF-8 stay escaped, and escapes that are not "%" + two hex digits
 *     stay as written;
 *   - control characters (C0, DEL, C1) stay escaped: no path holds one (PostgreSQL refuses NUL in
 *     text, and a decoded CR/LF has no business in a key).
 * Escapes that stay are upper-cased ("%2f" → "%2F"), so every spelling of a path reads the same.
 * The result is a key to compare, not a URL: a decoded "%3F" is a "?", so do not parse it again.
 */

import { utf8Decode } from './base64url';

const ORIGIN = 'http://localhost';
/** A run of percent-escapes ("%C3%A9"): the text escapeRunBytes() reads. */
const ESCAPE_RUN = /(?:%[0-9A-Fa-f]{2})+/g;
const CONTROL = /\p{Cc}/gu;
const LONE_SURROGATE = /\p{Cs}/gu;

/**
 * A path already in its canonical form: ASCII path characters the URL parser leaves alone, no
 * escapes, query, fragment, backslash, doubled slash or dot segment. Most requests look like this,
 * and for them the full normalisation below would return the input unchanged.
 */
const SEGMENT = String.raw`(?!\.\.?(?:/|$))[A-Za-z0-9\-._~!$&'()*+,;=:@]+`;
const CANONICAL_PATH = new RegExp(String.raw`^/(?:${SEGMENT}(?:/${SEGMENT})*/?)?$`);

/** Whether `url` is a path in its canonical form (above): requestPath() returns it unchanged. */
export function isCanonicalPath(url: string): boolean {
  return CANONICAL_PATH.test(url);
}

/** The request path used for pricing and token binding. Never throws; '/' for an empty input. */
export function requestPath(url: string): string {
  if (typeof url === 'string' && isCanonicalPath(url)) return url;
  const pathname = pathnameOf(typeof url === 'string' ? url : '');
  return decodePathEscapes(pathname.replace(/\/{2,}/g, '/'));
}

/** Percent-decodes a path as described above (also applied to the literal parts of rule patterns). */
export function decodePathEscapes(path: string): string {
  return path.includes('%') ? path.replace(ESCAPE_RUN, decodeRun) : path;
}

function pathnameOf(url: string): string {
  try {
    // new URL('//host/x', base) would take "host" as the host and price "/x" instead.
    const { pathname } = /^[/\\]/.test(url) ? new URL(ORIGIN + url) : new URL(url, ORIGIN);
    if (pathname.startsWith('/')) return pathname;
  } catch {
    // An absolute URL that does not parse, e.g. "http://[::1": read below as a plain path.
  }
  // Opaque ("mailto:x") or unparsable input is taken as path text, so it never shares "/"'s price or token.
  // (Input starting with "/" always parses, so it never gets here.)
  // Controls are escaped and lone surrogates replaced, as the URL parser does for a path it parses.
  const end = url.search(/[?#]/);
  const text = end < 0 ? url : url.slice(0, end);
  return '/' + text.replace(LONE_SURROGATE, '\ufffd').replace(CONTROL, encodeURIComponent);
}

/** The bytes a run of percent-escapes (ESCAPE_RUN) stands for. */
function escapeRunBytes(run: string): Uint8Array {
  const bytes = new Uint8Array(run.length / 3);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(run.slice(3 * i + 1, 3 * i + 3), 16);
  return bytes;
}

function decodeRun(run: string): string {
  const bytes = escapeRunBytes(run);
  let out = '';
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i];
    const size = b < 0x80 ? 1 : b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    // The fatal decoder rejects stray continuation bytes, overlong forms, surrogates and cut-off sequences.
    const text = b === 0x2f || b === 0x25 ? null : utf8Decode(bytes.subarray(i, i + size));
    if (text === null || isControl(text)) {
      out += '%' + b.toString(16).toUpperCase().padStart(2, '0');
      i += 1;
    } else {
      out += text;
      i += size;
    }
  }
  return out;
}

const isControl = (text: string) => text.search(CONTROL) >= 0;
