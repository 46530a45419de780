/** True when an error means the database cannot be reached, as opposed to a bad query. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const seen = new Set<unknown>();
  for (let current: unknown = error; current && !seen.has(current); current = (current as { cause?: unknown }).cause) {
    seen.add(current);
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
    if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message))) return true;
  }
  return false;
}

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
