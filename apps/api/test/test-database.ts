import { PGlite } from '@electric-sql/pglite';
import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import { openDatabase, type Database } from '../src/db/database';
import { migrate } from '../src/db/migrator';
import { pgliteDriver } from '../src/db/sql-driver';

export interface TestDatabase {
  database: Database;
  /** Drops what the test created (the PostgreSQL schema) and closes connections. */
  dispose(): Promise<void>;
}

/**
 * A fresh, migrated database for one test file: a PostgreSQL schema of its own when
 * DATABASE_URL is set, else a PGlite loaded from the run's migrated template.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const url = process.env.DATABASE_URL;
  if (url) {
    const schema = `t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
    await withClient(url, (client) => client.query(`CREATE SCHEMA "${schema}"`));
    const database = await openDatabase({ databaseUrl: url, schema });
    await migrate(database.sql);
    return {
      database,
      async dispose() {
        await database.close();
        await withClient(url, (client) => client.query(`DROP SCHEMA "${schema}" CASCADE`));
      },
    };
  }
  const template = process.env.CRAWLGATE_TEST_PGLITE_TEMPLATE;
  const pglite = template ? await PGlite.create({ loadDataDir: new Blob([readFileSync(template)]) }) : await PGlite.create();
  if (!template) await migrate(pgliteDriver(pglite));
  const database = await openDatabase({ pglite });
  return { database, dispose: () => database.close() };
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
