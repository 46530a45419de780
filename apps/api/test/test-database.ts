import { PGlite } from '@electric-sql/pglite';
import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import { openDatabase, type Database } from '../src/db/database';
import { migrate, type Migration } from '../src/db/migrator';
import { pgliteDriver } from '../src/db/sql-driver';
import { startTcpProxy, type TcpProxy, type TcpProxyOptions } from './tcp-proxy';

export interface TestDatabase {
  database: Database;
  /**
   * Another connection to the same database, as a second API instance would have: its own
   * PostgreSQL pool on the same schema. PGlite belongs to one process, so there it is shared.
   */
  connectAnother(): Promise<Database>;
  /** Drops what the test created (the PostgreSQL schema) and closes connections. */
  dispose(): Promise<void>;
}

export interface TestDatabaseOptions {
  /** PostgreSQL even on a PGlite run (fault tests need a server to lose). Default: DATABASE_URL. */
  postgresUrl?: string;
  /** The URL the database's pool connects with, e.g. through a fault-injection proxy; the schema is made and dropped at postgresUrl. */
  poolUrl?: string;
  /** Apply only these migrations (a migration's own test starts from the schema before it). Default: all. */
  migrations?: Migration[];
}

/**
 * A fresh, migrated database for one test file: a PostgreSQL schema of its own when
 * DATABASE_URL is set, else a PGlite loaded from the run's migrated template (its empty one when
 * the test applies migrations itself).
 */
export async function createTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const url = options.postgresUrl ?? process.env.DATABASE_URL;
  if (url) {
    const schema = `t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
    await withClient(url, (client) => client.query(`CREATE SCHEMA "${schema}"`));
    const database = await openDatabase({ databaseUrl: options.poolUrl ?? url, schema });
    await migrate(database.sql, options.migrations);
    const others: Database[] = [];
    return {
      database,
      async connectAnother() {
        const other = await openDatabase({ databaseUrl: options.poolUrl ?? url, schema });
        others.push(other);
        return other;
      },
      async dispose() {
        await Promise.all(others.map((other) => other.close()));
        await database.close();
        await withClient(url, (client) => client.query(`DROP SCHEMA "${schema}" CASCADE`));
      },
    };
  }
  const { pglite, migrated } = await templatePglite(options.migrations ? 'empty' : 'migrated');
  if (!migrated) await migrate(pgliteDriver(pglite), options.migrations);
  const database = await openDatabase({ pglite });
  return { database, connectAnother: async () => database, dispose: () => database.close() };
}

/**
 * A PGlite loaded from the run's template (global-setup): `migrated`, or `empty` (no migration
 * applied). Without the run's templates (a script outside jest), a new PGlite, migrated = false.
 */
export async function templatePglite(which: 'empty' | 'migrated'): Promise<{ pglite: PGlite; migrated: boolean }> {
  const template =
    which === 'empty' ? process.env.CRAWLGATE_TEST_PGLITE_EMPTY : process.env.CRAWLGATE_TEST_PGLITE_TEMPLATE;
  if (!template) return { pglite: await PGlite.create(), migrated: false };
  const loadDataDir = new Blob([readFileSync(template)], { type: 'application/x-tar' });
  return { pglite: await PGlite.create({ loadDataDir }), migrated: which === 'migrated' };
}

async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** PostgreSQL for fault tests, which need a server to lose or to slow: DATABASE_URL, else the local one. */
export const FAULT_TEST_POSTGRES_URL = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';

/**
 * A fresh database on PostgreSQL (even on a PGlite run) whose pool connects through a
 * fault-injection proxy, so a test can cut, drop or hold what the app sends it. Dispose the
 * database before closing the proxy.
 */
export async function createProxiedTestDatabase(
  tap: TcpProxyOptions['tap'],
): Promise<{ db: TestDatabase; proxy: TcpProxy }> {
  const server = new URL(FAULT_TEST_POSTGRES_URL);
  const proxy = await startTcpProxy(server.hostname, Number(server.port || 5432), { tap });
  const poolUrl = new URL(FAULT_TEST_POSTGRES_URL);
  poolUrl.hostname = '127.0.0.1';
  poolUrl.port = String(proxy.port);
  const db = await createTestDatabase({ postgresUrl: FAULT_TEST_POSTGRES_URL, poolUrl: poolUrl.toString() });
  return { db, proxy };
}

/**
 * Takes the transaction advisory lock `[key, text]` on `db` (an instance that stalled holding it)
 * and holds it until `release()`, which settles once it is let go.
 */
export async function holdAdvisoryLock(
  db: Database,
  [key, text]: [number, string],
): Promise<{ release(): Promise<void> }> {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const lockTaken = new Promise<void>((resolve) => (locked = resolve));
  const holding = db.sql.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1::int, hashtext($2))', [key, text]);
    locked();
    await held;
  });
  await Promise.race([lockTaken, holding]);
  return {
    release: async () => {
      release();
      await holding;
    },
  };
}
