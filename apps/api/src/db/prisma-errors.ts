/** Prisma's P2002: a unique constraint rejected the write. */
export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown })?.code === 'P2002';
}
