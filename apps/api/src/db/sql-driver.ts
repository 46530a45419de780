import type { PGlite } from '@electric-sql/pglite';
import type { Pool, PoolClient } from 'pg';

/** The few raw-SQL operations the migrator and health check need, on PGlite or PostgreSQL alike. */
export interface SqlSession {
  query<Row = Record<string, unknown>>(text: string, params?: unknown[]): Promise<Row[]>;
  /** Runs a script of several statements (no parameters). */
  exec(script: string): Promise<void>;
}

export interface SqlDriver extends SqlSession {
  /** Runs `work` on one connection, so session-level locks and transactions hold; if it throws, its advisory locks go. */
  session<T>(work: (session: SqlSession) => Promise<T>): Promise<T>;
  /**
   * Runs `work` in one transaction: committed once it resolves, rolled back if it throws. On PGlite
   * the transaction has the database to itself (every other query waits for it), as PGlite's do.
   */
  transaction<T>(work: (tx: SqlSession) => Promise<T>): Promise<T>;
}

export function pgliteDriver(db: PGlite): SqlDriver {
  const session: SqlSession = {
    query: async (text, params) => (await db.query(text, params)).rows as never,
    exec: async (script) => void (await db.exec(script)),
  };
  return {
    ...session,
    session: (work) => work(session),
    transaction: (work) =>
      db.transaction((tx) =>
        work({
          query: async (text, params) => (await tx.query(text, params)).rows as never,
          exec: async (script) => void (await tx.exec(script)),
        }),
      ),
  };
}

/**
 * A client of the pool for one piece of work. The pool listens for a client's errors only while it
 * is idle: one whose connection is lost while checked out (a failover, a terminated backend, a
 * keepalive giving up) emitted an 'error' nobody heard, which ended the process. Heard here, the
 * work's next query fails instead, and the client is dropped when released.
 */
async function checkOut(pool: Pool): Promise<{ client: PoolClient; release(error?: Error): void }> {
  const client = await pool.connect();
  let lost: Error | undefined;
  const onError = (error: Error) => (lost = error);
  client.on('error', onError);
  return {
    client,
    release(error) {
      client.off('error', onError);
      client.release(error ?? lost);
    },
  };
}

export function pgDriver(pool: Pool): SqlDriver {
  const onClient = (client: Pool | PoolClient): SqlSession => ({
    query: async (text, params) => (await client.query(text, params)).rows,
    exec: async (script) => void (await client.query(script)),
  });
  return {
    ...onClient(pool),
    async session(work) {
      const { client, release } = await checkOut(pool);
      try {
        const result = await work(onClient(client));
        release();
        return result;
      } catch (error) {
        // Session locks the work left behind (one whose unlock failed) would go on to the pool's next
        // caller: released here, or the connection is dropped if even that fails.
        let broken: Error | undefined;
        await client.query('SELECT pg_advisory_unlock_all()').catch((lost: Error) => (broken = lost));
        release(broken);
        throw error;
      }
    },
    async transaction(work) {
      const { client, release } = await checkOut(pool);
      let broken: Error | undefined;
      try {
        // Read committed whatever the server's default: a statement after a lock must see what the
        // lock's previous holder committed (the payer's claims in flight, payment.store.ts).
        await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
        const result = await work(onClient(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        // A connection that cannot even roll back is dropped, not handed to the next caller mid-transaction.
        await client.query('ROLLBACK').catch((lost: Error) => (broken = lost));
        throw error;
      } finally {
        release(broken);
      }
    },
  };
}
