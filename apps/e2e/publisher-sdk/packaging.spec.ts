/*
 * The package as a publisher installs it (tools/testing/published-package.ts): built once, beside
 * only its declared dependencies. Then the library is loaded both ways by plain Node, its
 * declarations type-check a consumer, and the built `crawlgate` binary runs against the real API.
 */

import { join } from 'node:path';
import { signAccessToken } from '@crawlgate/core';
import { registerPublisher } from '../../../apps/api/test/fixtures';
import { startTestApp } from '../../../apps/api/test/test-app';
import {
  exportsMapProblems,
  installedForSpec,
  loadEntry,
  packedPackageProblems,
  runNode,
  typeCheckConsumer,
  undeclaredImports,
} from '../../../tools/testing/published-package';

const pkg = installedForSpec(join(__dirname, '..', '..', '..', 'libs', 'publisher-sdk'));

describe('the published package', () => {
  it('ships every file package.json points at, and imports only declared dependencies', () => {
    expect(exportsMapProblems(pkg, ['.'])).toEqual([]);
    expect(pkg.manifest.bin).toEqual({ crawlgate: './dist/cli.cjs' });
    expect(undeclaredImports(pkg)).toEqual([]);
  });

  it('requires Node 20 and packs clean: @arethetypeswrong/cli (node10, node16 from CJS and ESM, bundler) and publint find nothing', () => {
    expect(pkg.manifest.engines).toEqual({ node: '>=20' });
    expect(packedPackageProblems(pkg)).toEqual([]);
  }, 60_000);

  it('loads with require() and import(), and verifies a token with the bundled core', async () => {
    const siteId = 'site-1';
    const iat = Math.floor(Date.now() / 1000);
    const token = signAccessToken(
      { gate_id: 'g', site_id: siteId, url: '/a', kid: 'k', iat, exp: iat + 3600 },
      'cgsec_x',
    );
    const check = `[Object.keys(m).sort(), m.verifyAccessToken(${JSON.stringify(token)}, { siteId: 'site-1', secret: 'cgsec_x', url: '/a' }).valid]`;
    const expected = [
      ['ApiError', 'PublisherClient', 'TimeoutError', 'payoutProofMessageOf', 'verifyAccessToken'],
      true,
    ];
    expect(await loadEntry(pkg, 'require', pkg.manifest.name, check)).toEqual(expected);
    expect(await loadEntry(pkg, 'import', pkg.manifest.name, check)).toEqual(expected);
  });

  it('type-checks a consumer, ESM and CommonJS, against the emitted declarations', () => {
    const consumer = `import { ApiError, PublisherClient, verifyAccessToken, type Pricing, type SiteStats, type ValidationItem } from '${pkg.manifest.name}';
const client = new PublisherClient({ apiUrl: 'https://api.example.com', timeoutMs: 5000 });
export async function run(): Promise<[Pricing, SiteStats, string, boolean]> {
  await client.setPricing('s', { default_price_usd: '0.001', rules: [{ path: '/a/*', price_usd: 0.01 }] });
  const items: ValidationItem[] | undefined = new ApiError({ status: 422, detail: [] }).items;
  for await (const payment of client.iterateSitePayments('s')) payment.payer.toLowerCase();
  const check = verifyAccessToken('t', { siteId: 's', secret: ['a', 'b'], url: '/a' });
  return [await client.getPricing('s'), await client.siteStats('s', { from: new Date() }), check.valid ? check.payload.gate_id : check.reason, items === undefined];
}
`;
    expect(typeCheckConsumer(pkg, consumer)).toBe('');
  });

  it('the crawlgate binary logs in and lists sites against the real API', async () => {
    const app = await startTestApp();
    try {
      const publisher = await registerPublisher(app);
      const bin = join(pkg.installed, pkg.manifest.bin!.crawlgate);
      const env = { XDG_CONFIG_HOME: join(pkg.site, 'config'), CRAWLGATE_PASSWORD: publisher.password };
      const login = await runNode(pkg, [bin, 'login', '--api', app.baseUrl, '--email', publisher.email], env);
      expect(login.stdout).toContain(`Logged in to ${app.baseUrl}.`);
      const created = await runNode(pkg, [bin, 'sites', 'create', 'bin.example.com', '--json'], env);
      const listed = JSON.parse((await runNode(pkg, [bin, 'sites', 'list', '--json'], env)).stdout);
      expect(listed.items.map((site: { site_id: string }) => site.site_id)).toEqual([
        JSON.parse(created.stdout).site_id,
      ]);
      await expect(runNode(pkg, [bin, 'pricing', 'show', 'nope'], env)).rejects.toMatchObject({
        code: 1,
        stderr: 'error: Site not found (HTTP 404)\n',
      });
    } finally {
      await app.close();
    }
    // An API started in this file (its modules loaded for the first time) and four Node processes:
    // twice over 30 s on a loaded machine (a CI beside other tests), 3.6 s alone on a quiet one.
  }, 90_000);
});
