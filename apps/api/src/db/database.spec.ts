import { createTestDatabase } from '../../test/test-database';
import { whileHoldingLock } from './advisory-lock';

/** Runs in the PostgreSQL run of the suites (DATABASE_URL set): PGlite has no network sessions. */
const onPostgres = process.env.DATABASE_URL ? it : it.skip;

describe('a PostgreSQL session of the API', () => {
  onPostgres(
    'asks the server to notice a lost client within a minute, so a dead instance’s job lock is freed',
    async () => {
      const test = await createTestDatabase();
      try {
        const settings = await test.database.sql.query<{ name: string; setting: string }>(
          `SELECT name, setting FROM pg_settings WHERE name IN ('tcp_keepalives_idle', 'tcp_keepalives_interval', 'tcp_keepalives_count') ORDER BY name`,
        );
        expect(settings).toEqual([
          { name: 'tcp_keepalives_count', setting: '3' },
          { name: 'tcp_keepalives_idle', setting: '30' },
          { name: 'tcp_keepalives_interval', setting: '10' },
        ]);
        // The schema a test isolates still applies beside them.
        const [{ schema }] = await test.database.sql.query<{ schema: string }>('SELECT current_schema() AS schema');
        expect(schema).toBe(test.database.schema);
      } finally {
        await test.dispose();
      }
    },
  );

  onPostgres(
    'survives losing the connection a job holds its lock on (a failover, a terminated backend): the job fails, the API runs on',
    async () => {
      const test = await createTestDatabase();
      try {
        const key = 72707399; // a test's own, beside JOB_LOCKS
        const job = whileHoldingLock(test.database, key, async () => {
          // Its session is ended from another connection while the job waits on something else (the chain).
          await test.database.sql.query(
            `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND classid = $1`,
            [key],
          );
          await new Promise((resolve) => setTimeout(resolve, 500));
          return 'done';
        });
        await expect(job).rejects.toThrow();
        // The pool serves the next caller on a fresh connection.
        expect(await test.database.sql.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
      } finally {
        await test.dispose();
      }
    },
  );
});
