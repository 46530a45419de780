import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiSpecFiles, filesReaching, PGLITE_ONLY, POSTGRESQL_ONLY, specsFor, specsUsingDatabase } from './suite-scope';

describe('which API specs each database run takes', () => {
  const all = apiSpecFiles();
  const pglite = specsFor('pglite');
  const postgresql = specsFor('postgresql');

  it('runs every spec in at least one of the two runs', () => {
    expect(all.length).toBeGreaterThan(100);
    expect(all.filter((spec) => !pglite.includes(spec) && !postgresql.includes(spec))).toEqual([]);
  });

  it('names only specs that exist and use a database as PostgreSQL-only: a renamed one is not silently dropped', () => {
    expect(POSTGRESQL_ONLY.filter((spec) => !all.includes(spec))).toEqual([]);
    const usingDatabase = specsUsingDatabase();
    expect(POSTGRESQL_ONLY.filter((spec) => !usingDatabase.includes(spec))).toEqual([]);
  });

  it('names as PGlite-only specs that exist, start a database, and read nothing of it themselves', () => {
    const usingDatabase = specsUsingDatabase();
    expect(PGLITE_ONLY.filter((spec) => !usingDatabase.includes(spec))).toEqual([]);
    const readsDatabase = /database|prisma|\.sql\b|\w+Store\b/i;
    expect(PGLITE_ONLY.filter((spec) => readsDatabase.test(readFileSync(join(__dirname, '..', spec), 'utf8')))).toEqual(
      [],
    );
    for (const spec of PGLITE_ONLY) expect([pglite.includes(spec), postgresql.includes(spec)]).toEqual([true, false]);
  });

  it('runs a spec that uses no database on PGlite only, one that does on both, a chain-judging one on PostgreSQL only', () => {
    const dbFree = 'src/gates/reportable-day.spec.ts';
    const http = 'src/health/health.spec.ts';
    const chainJudged = 'src/payments/reconciler.spec.ts';
    expect([pglite.includes(dbFree), postgresql.includes(dbFree)]).toEqual([true, false]);
    expect([pglite.includes(http), postgresql.includes(http)]).toEqual([true, true]);
    expect([pglite.includes(chainJudged), postgresql.includes(chainJudged)]).toEqual([false, true]);
    // The payment flows stay on both, and a spec that reads DATABASE_URL itself.
    for (const spec of [
      'src/payments/payments.spec.ts',
      'src/batch-settlement/voucher-payments.spec.ts',
      'src/db/after-pending-writes.spec.ts',
    ])
      expect([pglite.includes(spec), postgresql.includes(spec)]).toEqual([true, true]);
  });

  it('follows relative imports through helpers to the test database module, and stops at cycles', () => {
    const dir = mkdtempSync(join(tmpdir(), 'suite-scope-'));
    try {
      mkdirSync(join(dir, 'helpers'));
      const target = join(dir, 'helpers', 'test-database.ts');
      writeFileSync(target, 'export const db = 1;\n');
      writeFileSync(join(dir, 'helpers', 'app.ts'), "import { db } from './test-database';\nexport const app = db;\n");
      writeFileSync(join(dir, 'helpers', 'index.ts'), "export * from './app';\n");
      writeFileSync(join(dir, 'uses.spec.ts'), "import {\n  app,\n} from './helpers';\n");
      writeFileSync(join(dir, 'a.ts'), "import './b';\n");
      writeFileSync(join(dir, 'b.ts'), "import './a';\nimport 'node:fs';\n");
      writeFileSync(join(dir, 'free.spec.ts'), "import { x } from './a';\nimport { y } from '@crawlgate/core';\n");
      const files = [
        'helpers/test-database.ts',
        'helpers/app.ts',
        'helpers/index.ts',
        'uses.spec.ts',
        'a.ts',
        'b.ts',
        'free.spec.ts',
      ];
      const reaching = filesReaching(
        [target],
        files.map((file) => join(dir, file)),
      );
      expect(files.filter((file) => reaching.has(join(dir, file)))).toEqual([
        'helpers/test-database.ts',
        'helpers/app.ts',
        'helpers/index.ts',
        'uses.spec.ts',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
