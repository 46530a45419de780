/*
 * Text of any characters in a header value, as RFC 8187's ext-value: "UTF-8''" then the
 * percent-encoded UTF-8. A header carries bytes, not text: fetch refuses characters above U+00FF,
 * and HTTP drops spaces at either end, so a password with either would not arrive as typed
 * (X-Confirm-Password).
 */

const EXT_VALUE_PREFIX = /^utf-8''/i;

export function encodeHeaderText(text: string): string {
  return `UTF-8''${encodeURIComponent(text)}`;
}

/** The text a header value carries: an ext-value decoded, any other value as it came; undefined for a malformed ext-value. */
export function decodeHeaderText(value: string): string | undefined {
  const prefix = EXT_VALUE_PREFIX.exec(value);
  if (!prefix) return value;
  try {
    return decodeURIComponent(value.slice(prefix[0].length));
  } catch {
    return undefined;
  }
}
