/**
 * A function that blanks a configured URL out of any text, since a hosted JSON-RPC node's URL (or
 * a database's) holds its key or password: the URL as written, as the URL parser normalises it
 * (with and without its credentials, as viem and undici print it), and percent-encoded; its
 * credentials, and its path and query, when long enough to be a key (a short path such as /rpc
 * is no secret, and other text keeps it).
 */
export function urlRedactor(url: string, options: UrlRedactorOptions = {}): (text: string) => string {
  const { shortestPart = MIN_SECRET_LENGTH, username = true, path = true } = options;
  const parsed = new URL(url);
  const normalised = parsed.href;
  const secretLike = (part: string) => part.length >= shortestPart;
  const parts = [
    ...(username ? [decodeURIComponent(parsed.username)] : []),
    parsed.password,
    decodeURIComponent(parsed.password),
    ...(path ? [`${parsed.pathname}${parsed.search}`] : []),
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

/** Shorter parts of the URL are blanked only inside the whole URL: they could be common words. */
const MIN_SECRET_LENGTH = 16;

export interface UrlRedactorOptions {
  /** The shortest part blanked on its own (default 16: page text shown to a model keeps short words). */
  shortestPart?: number;
  /** Whether the user name is a secret part (default true: some providers put the key there). */
  username?: boolean;
  /** Whether the path and query are a secret part (default true: an RPC provider's key; a database's name is not). */
  path?: boolean;
}

/**
 * A function that replaces each of `secrets` (exactly as written, the longest first, so a secret
 * holding another is blanked whole) with `mark` in any text.
 */
export function literalRedactor(secrets: readonly string[], mark = '[redacted]'): (text: string) => string {
  const ordered = [...new Set(secrets)].filter((secret) => secret !== '').sort((a, b) => b.length - a.length);
  return (text) => ordered.reduce((redacted, secret) => redacted.split(secret).join(mark), text);
}
