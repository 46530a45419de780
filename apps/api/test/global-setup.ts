import { PGlite } from '@electric-sql/pglite';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pgliteDriver } from '../src/db/sql-driver';
import { migrate } from '../src/db/migrator';

/**
 * Builds one migrated PGlite once per run and dumps it; each test file then loads the dump
 * (about 1 s) instead of starting and migrating a fresh database (3–6 s).
 */
export default async function globalSetup(): Promise<void> {
  if (process.env.DATABASE_URL) return;
  const started = Date.now();
  const db = await PGlite.create();
  await migrate(pgliteDriver(db));
  const dump = await db.dumpDataDir('none');
  const dir = join(tmpdir(), `crawlgate-jest-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'pglite-template.tar');
  writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  await db.close();
  process.env.CRAWLGATE_TEST_PGLITE_TEMPLATE = file;
  if (process.env.CRAWLGATE_TEST_VERBOSE) console.log(`\nPGlite template built in ${Date.now() - started} ms`);
}
