import { Client } from 'pg';
import { createTestDatabase, templatePglite } from '../../test/test-database';
import { openDatabase, type Database } from './database';
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

/*
 * Prisma writes and reads timestamps without a zone, in the session's: a server (or a database)
 * whose default zone is not UTC shifted every stored time and moved stats between days, beside the
 * raw statements that write them in UTC (helper-363).
 */
describe('the time zone of the API’s database sessions', () => {
  it('is UTC on PGlite, whatever the session was set to', async () => {
    const { pglite } = await templatePglite('empty');
    await pglite.exec("SET TIME ZONE 'Asia/Tokyo'");
    const database = await openDatabase({ pglite });
    try {
      const [{ zone }] = await database.sql.query<{ zone: string }>('SELECT current_setting($1) AS zone', ['TimeZone']);
      expect(zone).toBe('UTC');
    } finally {
      await database.close();
    }
  });

  onPostgres('is UTC on PostgreSQL, whatever the database’s default', () =>
    withDatabaseDefault('timezone', 'Asia/Tokyo', async (database) => {
      const [{ zone }] = await database.sql.query<{ zone: string }>('SELECT current_setting($1) AS zone', ['TimeZone']);
      expect(zone).toBe('UTC');
    }),
  );
});

/*
 * The stores' compare-and-set writes (a voucher's charged total, a payment's confirmation, a claim
 * taken for its broadcast) re-read the row they lost a race to under READ COMMITTED; a server whose
 * default is REPEATABLE READ or SERIALIZABLE failed the loser with 40001, a 500 after the money
 * moved (helper-441's 2). Transactions of sql.transaction set it themselves; the rest did not.
 */
describe('the isolation level of the API’s database sessions', () => {
  onPostgres('is READ COMMITTED on PostgreSQL, whatever the database’s default', () =>
    withDatabaseDefault('default_transaction_isolation', 'serializable', async (database) => {
      const isolation = async () =>
        (
          await database.sql.query<{ level: string }>('SELECT current_setting($1) AS level', ['transaction_isolation'])
        )[0].level;
      expect(await isolation()).toBe('read committed');
      expect(
        await database.prisma.$transaction(
          async (tx) =>
            (
              await tx.$queryRawUnsafe<{ level: string }[]>("SELECT current_setting('transaction_isolation') AS level")
            )[0].level,
        ),
      ).toBe('read committed');
    }),
  );
});

/** `work` on the API's database of a fresh PostgreSQL database whose default `setting` is `value`, dropped after. */
async function withDatabaseDefault(setting: string, value: string, work: (database: Database) => Promise<void>) {
  const admin = new Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  const name = `defaults_${Date.now()}_${process.pid}`;
  await admin.query(`CREATE DATABASE ${name}`);
  try {
    await admin.query(`ALTER DATABASE ${name} SET ${setting} TO '${value}'`);
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = `/${name}`;
    const database = await openDatabase({ databaseUrl: url.href });
    try {
      await work(database);
    } finally {
      await database.close();
    }
  } finally {
    await admin.query(`DROP DATABASE ${name}`);
    await admin.end();
  }
}
