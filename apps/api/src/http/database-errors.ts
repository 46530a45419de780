/** True when an error means the database cannot be reached, as opposed to a bad query. */
export function isDatabaseUnavailable(error: unknown): boolean {
  return someCause(
    error,
    ({ code, message }) =>
      (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) ||
      (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message))),
  );
}

/**
 * True when a write named a row that is not there (a foreign key to it, or the row to update):
 * what a write meets when its site was deleted after the request found it. The answer is 404.
 */
export function isMissingRow(error: unknown): boolean {
  return someCause(error, ({ code }) => typeof code === 'string' && MISSING_ROW_CODES.has(code));
}

function someCause(error: unknown, test: (cause: { code?: unknown; message?: unknown }) => boolean): boolean {
  const seen = new Set<unknown>();
  for (let current: unknown = error; current && !seen.has(current); current = (current as { cause?: unknown }).cause) {
    seen.add(current);
    if (test(current as { code?: unknown; message?: unknown })) return true;
  }
  return false;
}

// PostgreSQL's foreign-key violation; Prisma's, and its record to update or delete not found.
const MISSING_ROW_CODES = new Set(['23503', 'P2003', 'P2025']);

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08006', // PostgreSQL: shutdown, connection failures
  'P1001',
  'P1002',
  'P1017', // Prisma: server unreachable, timed out, closed the connection
]);

const UNAVAILABLE_MESSAGES = [
  /Connection terminated/i,
  /Client has encountered a connection error/i, // pg: a statement (the ROLLBACK, say) on a client whose connection already broke
  /connect(ion)? timeout/i,
  /timeout exceeded when trying to connect/i, // pg-pool: no connection free within connectionTimeoutMillis (overload: 503, not 500)
  /Can't reach database server/i,
  /database system is (shutting down|starting up)/i,
  /DatabaseNotReachable/,
];
