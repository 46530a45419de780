/*
 * Which API spec files each database's run of the suite takes. A spec runs on a database only where
 * that database can change its outcome:
 * - a spec that never reaches a test database (it neither reads DATABASE_URL nor imports anything
 *   that leads to a module that does, as test-database.ts) runs once, in the PGlite run (`npm test`): the PostgreSQL run would repeat it byte for byte;
 * - a spec that settles on the chain and then judges what the chain did (reorgs, fee bumps, lost or
 *   stuck broadcasts, the reconciler's and claimer's passes, front-runs, refund races) runs in the
 *   PostgreSQL run only: its SQL is the stores' that both runs test, its cost is chain time, and
 *   PostgreSQL is where instances run side by side and race;
 * - a spec that always uses PostgreSQL (a fault proxy in front of a server) runs in that run only;
 * - a spec of another layer than the database (the HTTP surface, the API document, signatures, the
 *   dev faucet) that starts the API only to reach that layer, and reads nothing of the database
 *   itself, runs in the PGlite run only: the stores it passes through are each tested on both by
 *   their own specs;
 * - everything else, every store spec, the payment flows and their faults, runs on both.
 * The PGlite run's driver still settles exact payments, vouchers and refunds in payments.spec,
 * voucher-payments.spec, refunds.spec and the e2e suites, which run the API on PGlite.
 */

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export type SuiteDatabase = 'pglite' | 'postgresql';

/** apps/api. */
const API_ROOT = resolve(__dirname, '..');

/** Specs judged on the chain after their request (see above), relative to apps/api. */
export const POSTGRESQL_ONLY = [
  // What the chain did to a settlement after its request.
  'src/payments/reconciler.spec.ts',
  'src/payments/fee-bump.spec.ts',
  'src/payments/transfer-after-expiry.spec.ts',
  'src/payments/transfer-reorg.spec.ts',
  'src/payments/front-run.spec.ts',
  'src/payments/held-broadcast.spec.ts',
  'src/payments/overlapping-settlements.spec.ts',
  'src/payments/contract-payer-gas.spec.ts',
  'src/payments/payout-change-transfer.spec.ts',
  'src/payments/claim-order.spec.ts',
  'src/payments/relayer-turns.spec.ts',
  'src/payments/coverage-one-state.spec.ts',
  'src/payments/public-data.spec.ts',
  'src/payments/relay-refusal-fairness.spec.ts',
  'src/payments/relayer-fee-cap.spec.ts',
  // The claimer's passes and refunds' races with them.
  'src/batch-settlement/claimer.spec.ts',
  'src/batch-settlement/claimer-fee-bump.spec.ts',
  'src/batch-settlement/claimer-urgent-fees.spec.ts',
  'src/batch-settlement/claimer-estimate-publishes.spec.ts',
  'src/batch-settlement/claimer-checked-fees.spec.ts',
  'src/batch-settlement/claimer-stuck-ahead.spec.ts',
  'src/batch-settlement/claimer-finalize-race.spec.ts',
  'src/batch-settlement/claimer-finalizable-batching.spec.ts',
  'src/batch-settlement/claimer-deposit-ahead.spec.ts',
  'src/batch-settlement/deposit-revert-refused.spec.ts',
  'src/batch-settlement/deposit-fee-bump.spec.ts',
  'src/batch-settlement/claimer-urgent-amplify.spec.ts',
  'src/batch-settlement/claimer-urgent-window.spec.ts',
  'src/batch-settlement/claimer-liveness.spec.ts',
  'src/batch-settlement/claimer-run-length.spec.ts',
  'src/batch-settlement/claimer-settle-reverts.spec.ts',
  'src/batch-settlement/channel-state-reuse.spec.ts',
  'src/batch-settlement/voucher-confirmations.spec.ts',
  'src/batch-settlement/refund-reorg.spec.ts',
  'src/batch-settlement/refund-race.spec.ts',
  'src/batch-settlement/refund-front-run.spec.ts',
  'src/batch-settlement/refund-refused-receiver.spec.ts',
  'src/batch-settlement/refund-fee-bump.spec.ts',
  // On PostgreSQL in either run (a fault proxy in front of a server).
  'src/faults/database-outage.spec.ts',
  'src/faults/payer-turn-stall.spec.ts',
  'src/faults/relayer-turn-stall.spec.ts',
  'src/batch-settlement/deposit-exact-coverage.spec.ts',
];

/**
 * Specs of another layer than the database (see above), relative to apps/api: each starts the API
 * and asserts what its HTTP answers, document or signatures say, never what the database holds
 * (suite-scope.spec checks that none names a store, the database or SQL).
 */
export const PGLITE_ONLY = [
  'test/openapi-client.spec.ts',
  'src/openapi/openapi.spec.ts',
  'src/http/http-errors.spec.ts',
  'src/http/unknown-fields.spec.ts',
  'src/http/response-headers.spec.ts',
  'src/dashboard/serve-dashboard.spec.ts',
  'src/chain/signed-message.spec.ts',
  'src/dev/faucet.spec.ts',
];

/** Every TypeScript file under `root`'s src and test, absolute paths, sorted. */
function sourceFiles(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (name === 'node_modules' || name === 'generated') continue;
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.tsx?$/.test(name)) found.push(path);
    }
  };
  for (const dir of ['src', 'test']) if (existsSync(join(root, dir))) walk(join(root, dir));
  return found.sort();
}

/** Every spec file of the API, relative to apps/api, sorted. */
export function apiSpecFiles(root = API_ROOT): string[] {
  return sourceFiles(root)
    .filter((file) => file.endsWith('.spec.ts'))
    .map((file) => relative(root, file));
}

/**
 * The files among `files` that are one of `targets` or import one through relative imports,
 * directly or through others (a type-only import counts: it may come with a value import later).
 */
export function filesReaching(targets: string[], files: string[]): Set<string> {
  const importers = new Map<string, string[]>();
  for (const file of files) {
    const source = readFileSync(file, 'utf8');
    for (const [, specifier] of source.matchAll(/(?:from|import|require\()\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const imported = resolveRelative(dirname(file), specifier);
      if (imported) importers.set(imported, [...(importers.get(imported) ?? []), file]);
    }
  }
  const reaching = new Set<string>(targets);
  const queue = [...targets];
  for (let next = queue.shift(); next !== undefined; next = queue.shift())
    for (const importer of importers.get(next) ?? [])
      if (!reaching.has(importer)) {
        reaching.add(importer);
        queue.push(importer);
      }
  return reaching;
}

function resolveRelative(dir: string, specifier: string): string | undefined {
  const base = resolve(dir, specifier);
  return [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts')].find(
    (candidate) => existsSync(candidate) && statSync(candidate).isFile(),
  );
}

/**
 * The spec files (relative to `root`) that may use a test database: they read DATABASE_URL, or
 * reach a module that does (test/test-database.ts opens the tests' databases).
 */
export function specsUsingDatabase(root = API_ROOT): string[] {
  const files = sourceFiles(root);
  const readers = files.filter((file) => /process\.env\.DATABASE_URL/.test(readFileSync(file, 'utf8')));
  const reaching = filesReaching(readers, files);
  return apiSpecFiles(root).filter((spec) => reaching.has(join(root, spec)));
}

/** The spec files (relative to apps/api) the run on `database` takes. */
export function specsFor(database: SuiteDatabase, root = API_ROOT): string[] {
  const all = apiSpecFiles(root);
  if (database === 'pglite') return all.filter((spec) => !POSTGRESQL_ONLY.includes(spec));
  const usingDatabase = new Set(specsUsingDatabase(root));
  return all.filter(
    (spec) => (usingDatabase.has(spec) && !PGLITE_ONLY.includes(spec)) || POSTGRESQL_ONLY.includes(spec),
  );
}
