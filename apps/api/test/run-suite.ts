/*
 * `nx run api:test`: the API's jest project on the run's database (PGlite, or PostgreSQL when
 * DATABASE_URL is set), over the spec files that database's run takes (suite-scope.ts), its report
 * in test-output/api-<database>.json. Arguments are passed on to jest; spec paths given there run
 * whatever the scope says.
 */

import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { specsFor, type SuiteDatabase } from './suite-scope';

const ROOT = resolve(__dirname, '..', '..', '..');
const database: SuiteDatabase = process.env.DATABASE_URL ? 'postgresql' : 'pglite';
const extra = process.argv.slice(2);
const namesSpecs = extra.some((arg) => arg.endsWith('.spec.ts'));
const specs = namesSpecs ? [] : specsFor(database).map((spec) => join('apps', 'api', spec));
const jest = join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js');
const args = [
  jest,
  '--selectProjects',
  'api',
  '--json',
  `--outputFile=test-output/api-${database}.json`,
  ...extra,
  ...(specs.length ? ['--runTestsByPath', ...specs] : []),
];
console.log(`API suite on ${database}: ${namesSpecs ? 'the specs named' : `${specs.length} spec files`}`);
const run = spawnSync(process.execPath, args, { cwd: ROOT, stdio: 'inherit' });
process.exit(run.status ?? 1);
