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

/**
 * A function that blanks a JSON-RPC URL out of any text, since a hosted node's URL holds its API
 * key: the URL as written, as the URL parser normalises it (with and without its credentials, as
 * viem and undici print it), and percent-encoded; its credentials, and its path and query, when
 * long enough to be a key (a short path such as /rpc is no secret, and page text keeps it).
 */
export function urlRedactor(url: string): (text: string) => string {
  const parsed = new URL(url);
  const normalised = parsed.href;
  const secretLike = (part: string) => part.length >= MIN_SECRET_LENGTH;
  const parts = [
    decodeURIComponent(parsed.username),
    decodeURIComponent(parsed.password),
    `${parsed.pathname}${parsed.search}`,
  ].filter(secretLike);
  parsed.username = '';
  parsed.password = '';
  const forms = [url, normalised, parsed.href].flatMap((form) => [form, form.replace(/\/$/, '')]);
  const literals = [...new Set([...forms, ...forms.map(encodeURIComponent), ...parts].filter((l) => l !== ''))]
    .sort((a, b) => b.length - a.length)
    .map((literal) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const pattern = new RegExp(literals.join('|'), 'gi');
  return (text) => text.replace(pattern, '[redacted]');
}

/** Shorter parts of the RPC URL are blanked only inside the whole URL: they could be common words. */
const MIN_SECRET_LENGTH = 16;

/** `value` with the secret blanked out of every string in it (it must be JSON: a tool result). */
export function redactJson<T>(value: T, redact: (text: string) => string): T {
  const json = JSON.stringify(value);
  const clean = redact(json);
  // Hex digits and URL characters need no JSON escaping, so blanking them inside the JSON text is
  // blanking them in the strings.
  return clean === json ? value : (JSON.parse(clean) as T);
}
