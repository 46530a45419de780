/*
 * The package as a publisher installs it: built once with tsup into a temporary
 * node_modules/@crawlgate/publisher (never libs/publisher-sdk/dist, which a developer may be
 * building), beside only its declared dependencies, outside the workspace so nothing else
 * resolves. Then the library is loaded both ways by plain Node, its declarations type-check a
 * consumer, and the built `crawlgate` binary runs against the real API.
 */

import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { signAccessToken } from '@crawlgate/core';
import { registerPublisher } from '../../../apps/api/test/fixtures';
import { startTestApp } from '../../../apps/api/test/test-app';

const PACKAGE_DIR = join(__dirname, '..');
const ROOT = join(PACKAGE_DIR, '..', '..');
const manifest = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8'));
const dependencies = Object.keys(manifest.dependencies ?? {});

let home: string;
let installed: string;

beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'crawlgate-publisher-'));
  installed = join(home, 'node_modules', manifest.name);
  mkdirSync(installed, { recursive: true });
  const tsup = join(ROOT, 'node_modules/tsup/dist/cli-default.js');
  execFileSync(process.execPath, [tsup, '--config', join(PACKAGE_DIR, 'tsup.config.ts'), '--out-dir', join(installed, 'dist'), '--silent'], { cwd: ROOT, stdio: 'pipe' });
  copyFileSync(join(PACKAGE_DIR, 'package.json'), join(installed, 'package.json'));
  for (const name of [...dependencies, '@types/node']) {
    mkdirSync(join(home, 'node_modules', name, '..'), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules', name), join(home, 'node_modules', name), 'dir');
  }
}, 120_000);

afterAll(() => rmSync(home, { recursive: true, force: true }));

const runNode = (args: string[], env: Record<string, string> = {}) =>
  promisify(execFile)(process.execPath, args, { cwd: home, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: home, ...env } });

describe('the published package', () => {
  it('ships every file package.json points at, and imports only declared dependencies', () => {
    const { import: esm, require: cjs } = manifest.exports['.'];
    for (const file of [manifest.main, manifest.module, manifest.types, esm.types, esm.default, cjs.types, cjs.default, manifest.bin.crawlgate]) {
      expect(statSync(join(installed, file)).isFile()).toBe(true);
    }
    const imported = readdirSync(join(installed, 'dist'))
      .filter((file) => /\.[cm]js$/.test(file))
      .flatMap((file) => [...readFileSync(join(installed, 'dist', file), 'utf8').matchAll(/(?:from |require\()['"]([^'"./][^'"]*)['"]/g)].map((m) => m[1]))
      .filter((specifier) => !specifier.startsWith('node:'))
      .map((specifier) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/'));
    expect([...new Set(imported)].filter((name) => !dependencies.includes(name))).toEqual([]);
  });

  it('loads with require() and import(), and verifies a token with the bundled core', async () => {
    const siteId = 'site-1';
    const token = signAccessToken({ gate_id: 'g', site_id: siteId, url: '/a', kid: 'k', iat: 1, exp: 4_000_000_000 }, 'cgsec_x');
    const check = `JSON.stringify([Object.keys(m).sort(), m.verifyAccessToken(${JSON.stringify(token)}, { siteId: 'site-1', secret: 'cgsec_x', url: '/a' }).valid])`;
    const expected = `${JSON.stringify([['ApiError', 'PublisherClient', 'TimeoutError', 'verifyAccessToken'], true])}\n`;
    expect((await runNode(['-e', `const m = require('${manifest.name}'); console.log(${check})`])).stdout).toBe(expected);
    expect((await runNode(['--input-type=module', '-e', `const m = await import('${manifest.name}'); console.log(${check})`])).stdout).toBe(expected);
  });

  it('type-checks a consumer, ESM and CommonJS, against the emitted declarations', () => {
    const consumer = `import { ApiError, PublisherClient, verifyAccessToken, type Pricing, type SiteStats, type ValidationItem } from '${manifest.name}';
const client = new PublisherClient({ apiUrl: 'https://api.example.com', timeoutMs: 5000 });
export async function run(): Promise<[Pricing, SiteStats, string, boolean]> {
  await client.setPricing('s', { default_price_usd: '0.001', rules: [{ path: '/a/*', price_usd: 0.01 }] });
  const items: ValidationItem[] | undefined = new ApiError({ status: 422, detail: [] }).items;
  for await (const payment of client.iterateSitePayments('s')) payment.payer.toLowerCase();
  const check = verifyAccessToken('t', { siteId: 's', secret: ['a', 'b'] });
  return [await client.getPricing('s'), await client.siteStats('s', { from: new Date() }), check.valid ? check.payload.gate_id : check.reason, items === undefined];
}
`;
    writeFileSync(join(home, 'consumer.mts'), consumer);
    writeFileSync(join(home, 'consumer.cts'), consumer);
    const compilerOptions = { module: 'node16', moduleResolution: 'node16', target: 'es2022', strict: true, noEmit: true, skipLibCheck: false, types: ['node'] };
    writeFileSync(join(home, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['consumer.mts', 'consumer.cts'] }));
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const result = (() => {
      try {
        return execFileSync(process.execPath, [tsc, '-p', join(home, 'tsconfig.json')], { cwd: home, encoding: 'utf8' });
      } catch (error) {
        return String((error as { stdout?: string }).stdout ?? error);
      }
    })();
    expect(result).toBe('');
  });

  it('the crawlgate binary logs in and lists sites against the real API', async () => {
    const app = await startTestApp();
    try {
      const publisher = await registerPublisher(app);
      const bin = join(installed, manifest.bin.crawlgate);
      const env = { XDG_CONFIG_HOME: join(home, 'config'), CRAWLGATE_PASSWORD: publisher.password };
      const login = await runNode([bin, 'login', '--api', app.baseUrl, '--email', publisher.email], env);
      expect(login.stdout).toContain(`Logged in to ${app.baseUrl}.`);
      const created = await runNode([bin, 'sites', 'create', 'bin.example.com', '--json'], env);
      const listed = JSON.parse((await runNode([bin, 'sites', 'list', '--json'], env)).stdout);
      expect(listed.items.map((site: { site_id: string }) => site.site_id)).toEqual([JSON.parse(created.stdout).site_id]);
      await expect(runNode([bin, 'pricing', 'show', 'nope'], env)).rejects.toMatchObject({ code: 1, stderr: 'error: Site not found (HTTP 404)\n' });
    } finally {
      await app.close();
    }
  });
});
