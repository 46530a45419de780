/**
 * A function that blanks `secret` (a hex private key) out of any text, in any case, with or
 * without its 0x. Every tool result and log line passes through it: whatever a library puts in
 * an error message, the wallet key must not reach the assistant or its logs.
 */
export function secretRedactor(secret: string): (text: string) => string {
  const hex = secret.replace(/^0x/i, '');
  if (!/^[0-9a-f]+$/i.test(hex)) throw new TypeError('secretRedactor: the secret must be hex');
  const pattern = new RegExp(`(?:0x)?${hex}`, 'gi');
  return (text) => text.replace(pattern, '[redacted]');
}

/** `value` with the secret blanked out of every string in it (it must be JSON: a tool result). */
export function redactJson<T>(value: T, redact: (text: string) => string): T {
  const json = JSON.stringify(value);
  const clean = redact(json);
  // Hex digits and URL characters need no JSON escaping, so blanking them inside the JSON text is
  // blanking them in the strings.
  return clean === json ? value : (JSON.parse(clean) as T);
}
