import type { Database } from './database';

/**
 * Session advisory locks of the background jobs that must run on one API instance at a time
 * (Prisma Migrate's id + 1, + 2): each would otherwise do the same chain work twice, paying its gas.
 */
export const JOB_LOCKS = { reconciler: 72707370, claimer: 72707371 } as const;

/**
 * Runs `work` while holding the session advisory lock `key` of this deployment, taken only if no
 * other session holds it; undefined, without running it, when one does (another instance is doing
 * that job now). Advisory locks belong to the whole database: the schema is the lock's second key,
 * so deployments sharing a database on schemas of their own do not stop each other's jobs. The
 * configured schema, not the connection's current_schema(): that depends on each role's search_path.
 */
export function whileHoldingLock<T>(db: Database, key: number, work: () => Promise<T>): Promise<T | undefined> {
  return db.sql.session(async (session) => {
    const [{ locked }] = await session.query<{ locked: boolean }>(
      'SELECT pg_try_advisory_lock($1, hashtext($2)) AS locked',
      [key, db.schema],
    );
    if (!locked) return undefined;
    const outcome = await work().then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    const [{ unlocked }] = await session.query<{ unlocked: boolean }>(
      'SELECT pg_advisory_unlock($1, hashtext($2)) AS unlocked',
      [key, db.schema],
    );
    if ('error' in outcome) throw outcome.error;
    // Never quietly kept: a failed session releases every advisory lock it holds (SqlDriver.session).
    if (!unlocked) throw new Error(`advisory lock ${key} was not held at its unlock`);
    return outcome.value;
  });
}
