/** A unique constraint rejected the write: Prisma's P2002, or SQLSTATE 23505 from raw SQL (pg and PGlite alike). */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return code === 'P2002' || code === '23505';
}

/** A lock was not had within the transaction's lock_timeout: SQLSTATE 55P03 (lock_not_available). */
export function isLockNotAvailable(error: unknown): boolean {
  return (error as { code?: unknown })?.code === '55P03';
}
