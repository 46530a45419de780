import { PGlite } from '@electric-sql/pglite';
// Relative imports: jest's moduleNameMapper does not apply to global set-up, only to test files.
import { startAnvil, type AnvilInstance } from '../../../libs/devchain/src/anvil';
import { deployTestUsdc } from '../../../libs/devchain/src/deploy';
import { placeBatchSettlement } from '../../../libs/devchain/src/batch-settlement-deploy';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate } from '../src/db/migrator';
import { pgliteDriver } from '../src/db/sql-driver';

export interface TestChain {
  rpcUrl: string;
  usdc: `0x${string}`;
}

/**
 * Once per run: one local chain per jest worker (so one worker's evm_revert never undoes another's
 * payments), each with the test USDC deployed, and PGlite templates each test file loads in about
 * 0.6 s instead of starting (and migrating) its own (3–6 s): one migrated, and one empty for the
 * migrations' own tests, which apply migrations themselves.
 */
export default async function globalSetup(globalConfig: { maxWorkers: number }): Promise<void> {
  // Several jest projects share this set-up; the first one to run prepares everything for all.
  if ((globalThis as { crawlgateAnvils?: unknown }).crawlgateAnvils) return;
  const workers = Math.max(1, globalConfig.maxWorkers);
  const anvils: AnvilInstance[] = await Promise.all(Array.from({ length: workers }, () => startAnvil()));
  (globalThis as { crawlgateAnvils?: AnvilInstance[] }).crawlgateAnvils = anvils;
  const chains: TestChain[] = await Promise.all(
    anvils.map(async (anvil) => {
      // The batch-settlement escrow at x402's addresses, as `npm start` places it on `local`.
      await placeBatchSettlement({ rpcUrl: anvil.rpcUrl });
      return { rpcUrl: anvil.rpcUrl, usdc: (await deployTestUsdc({ rpcUrl: anvil.rpcUrl })).usdc };
    }),
  );
  process.env.CRAWLGATE_TEST_CHAINS = JSON.stringify(chains);

  if (process.env.DATABASE_URL) return;
  const dir = pgliteTemplateDir();
  mkdirSync(dir, { recursive: true });
  // Every test file starts a PGlite from these, so their start-up is paid ~150 times a run: a
  // 1 MB WAL segment (16 by default) and 16 MB of shared buffers (128, zeroed at each start) halve
  // it, and an uncompressed tar (16 MB, read from the page cache) loads in 0.3 s where gzip's 4 MB
  // took 0.55 s to inflate. Production's embedded database keeps the defaults.
  const db = await PGlite.create({ initDbStartParams: ['--wal-segsize=1'] });
  await db.exec("ALTER SYSTEM SET shared_buffers = '16MB'");
  await dropTemplateDatabases(db);
  process.env.CRAWLGATE_TEST_PGLITE_EMPTY = await dumpTo(db, join(dir, 'pglite-empty.tar'));
  await migrate(pgliteDriver(db));
  process.env.CRAWLGATE_TEST_PGLITE_TEMPLATE = await dumpTo(db, join(dir, 'pglite-migrated.tar'));
  await db.close();
}

/** Where this run's PGlite templates are written (global-teardown removes it). */
export function pgliteTemplateDir(): string {
  return join(tmpdir(), `crawlgate-jest-${process.pid}`);
}

/**
 * initdb's template0 and template1 are half of a data directory (15 of its 31 MB), copied into every
 * test file's PGlite; nothing on PGlite creates a database from them, so the templates leave them out.
 */
async function dropTemplateDatabases(db: PGlite): Promise<void> {
  await db.exec("UPDATE pg_database SET datistemplate = false WHERE datname IN ('template0', 'template1')");
  // One statement per call: DROP DATABASE refuses to run inside the implicit transaction of a batch.
  for (const name of ['template0', 'template1']) await db.exec(`DROP DATABASE ${name}`);
  await db.exec('CHECKPOINT');
}

async function dumpTo(db: PGlite, file: string): Promise<string> {
  const dump = await db.dumpDataDir('none');
  writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  return file;
}
