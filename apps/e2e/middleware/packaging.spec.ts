/*
 * The package as a site owner installs it (tools/testing/published-package.ts): built once, beside
 * only its declared dependencies and the frameworks a site would have. Then: require() and
 * import() every entry with plain Node, check what the files import against package.json,
 * type-check a consumer against the emitted declarations (through the `exports` map, and through
 * typesVersions under the old node10 resolution), and pack it for @arethetypeswrong/cli and publint.
 */

import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  distFilesContaining,
  exportsMapProblems,
  installedForSpec,
  loadEntry,
  packedPackageProblems,
  typeCheckConsumer,
  undeclaredImports,
} from '../../../tools/testing/published-package';

const NAME = '@crawlgate/middleware';

/** Every import path of the package and names it must export (a sample of each entry's API). */
const ENTRIES: Record<string, string[]> = {
  '.': ['createCrawlgate', 'classifyVisitor', 'isAlwaysFreePath', 'buildPayJson', 'CrawlgateApiError', 'PAY_JSON_PATH'],
  './express': ['crawlgateExpress'],
  './fastify': ['crawlgateFastify'],
  './fetch': ['crawlgateFetch'],
  './hono': ['crawlgateHono'],
  './nest': ['CrawlgateGuard', 'CrawlgateModule'],
  './node': ['nodeKeyDirectoryFetch', 'publicAddressFetch', 'PrivateAddressError'],
};

/** What a site using each adapter already has installed. */
const SITE_PACKAGES = ['express', 'fastify', 'hono', '@nestjs/common', '@nestjs/core', 'reflect-metadata'];

const pkg = installedForSpec(join(__dirname, '..', '..', '..', 'libs', 'middleware'), SITE_PACKAGES);

describe('the published package', () => {
  it('builds every entry, and its exports map points only at files it ships', () => {
    expect(exportsMapProblems(pkg, Object.keys(ENTRIES))).toEqual([]);
    expect(pkg.manifest.files).toEqual(['dist']);
  });

  it('imports nothing, in code or declarations, that package.json does not declare', () => {
    expect(undeclaredImports(pkg)).toEqual([]);
  });

  it('declares Node 20, and its frameworks as optional peers: a site installs only the one it uses', () => {
    expect(pkg.manifest.engines).toEqual({ node: '>=20' });
    const peers = Object.keys(pkg.manifest.peerDependencies ?? {}).sort();
    expect(peers).toEqual(['@nestjs/common', '@nestjs/core', 'fastify']);
    expect(peers.filter((name) => pkg.manifest.peerDependenciesMeta?.[name]?.optional !== true)).toEqual([]);
  });

  it('packs clean: @arethetypeswrong/cli (node10, node16 from CJS and ESM, bundler) and publint find nothing', () => {
    expect(packedPackageProblems(pkg)).toEqual([]);
  }, 60_000);

  it('the pack check can fail: without typesVersions, attw finds no types for any subpath under node10', () => {
    const site = mkdtempSync(join(tmpdir(), 'crawlgate-middleware-untyped-'));
    try {
      const installed = join(site, 'package');
      cpSync(pkg.installed, installed, { recursive: true });
      const { typesVersions, ...manifest } = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
      expect(typesVersions).toBeDefined();
      writeFileSync(join(installed, 'package.json'), JSON.stringify(manifest));
      const subpaths = Object.keys(ENTRIES).filter((path) => path !== '.');
      expect(packedPackageProblems({ installed, site })).toEqual(
        subpaths.map((path) => `attw NoResolution: ${path} (node10)`),
      );
    } finally {
      rmSync(site, { recursive: true, force: true });
    }
  }, 60_000);

  it('type-checks a consumer under moduleResolution node10 (Next.js, classic NestJS): subpaths through typesVersions', () => {
    const consumer = `import { createCrawlgate, type CrawlgateOptions } from '${NAME}';
import { crawlgateExpress } from '${NAME}/express';
import { crawlgateFastify } from '${NAME}/fastify';
import { crawlgateFetch } from '${NAME}/fetch';
import { crawlgateHono } from '${NAME}/hono';
import { CrawlgateGuard } from '${NAME}/nest';

export const uses = [(options: CrawlgateOptions) => [createCrawlgate(options), crawlgateExpress(options), crawlgateFetch(options), crawlgateHono(options)], crawlgateFastify, CrawlgateGuard];
`;
    expect(typeCheckConsumer(pkg, consumer, ['node10'])).toBe('');
  });

  it('bundles @crawlgate/core, keeps NestJS to the nest entry and never mentions Prisma', () => {
    const offending = [
      ...distFilesContaining(pkg, '@crawlgate/').map((file) => `${file}: @crawlgate/`),
      ...distFilesContaining(pkg, '@prisma').map((file) => `${file}: @prisma`),
      ...distFilesContaining(pkg, '@nestjs')
        .filter((file) => !file.startsWith('nest.'))
        .map((file) => `${file}: @nestjs`),
    ];
    expect(offending).toEqual([]);
  });

  it('never mentions node:crypto, so edge runtimes can bundle any entry', () => {
    // Tokens and gates are checked with core's own HMAC (libs/core/src/hmac.ts) on every runtime.
    expect(distFilesContaining(pkg, 'node:crypto')).toEqual([]);
  });

  it.each(Object.entries(ENTRIES))(
    'require("%s") works in plain Node and exports what it should',
    async (path, names) => {
      expect(await loadEntry(pkg, 'require', join(NAME, path))).toEqual(expect.arrayContaining(names));
    },
  );

  it.each(Object.entries(ENTRIES))(
    'import("%s") works in plain Node and exports what it should',
    async (path, names) => {
      expect(await loadEntry(pkg, 'import', join(NAME, path))).toEqual(expect.arrayContaining(names));
    },
  );

  it('type-checks a consumer, ESM and CommonJS, against the emitted declarations', () => {
    const imports = Object.entries(ENTRIES)
      .map(
        ([path, names], i) =>
          `import { ${names.map((n) => `${n} as e${i}_${n}`).join(', ')} } from '${join(NAME, path)}';`,
      )
      .join('\n');
    const consumer = `${imports}
import type { BotPolicy, CrawlgateOptions, Visitor } from '${NAME}';
import { Hono } from 'hono';

const policy: BotPolicy = { categories: { seo: 'block' }, bots: { GPTBot: 'allow' } };
const visitor: Visitor = e0_classifyVisitor('curl/8.4.0', policy);
export const checks = [
  visitor.kind === 'bot' ? visitor.category : 'human',
  e0_isAlwaysFreePath('/robots.txt'),
  e0_buildPayJson({ site_id: 's', domain: 'd', default_price_usd: '0', rules: [], pricing_version: 0, network: 'base', caip2: 'eip155:8453', chain_id: 8453, asset: '0x', x402_network: 'base', asset_name: 'USD Coin', asset_version: '2', pay_to: null, gate_ttl_seconds: 900, settlement_timeout_seconds: 30, max_url_length: 2048, api_base_url: 'https://api' }).payment.caip2,
  e0_PAY_JSON_PATH,
  new e0_CrawlgateApiError('x').message,
  (options: CrawlgateOptions) => [e0_createCrawlgate(options), e1_crawlgateExpress(options), e3_crawlgateFetch(options)],
  e2_crawlgateFastify,
  (options: CrawlgateOptions) => new Hono().use('*', e4_crawlgateHono(options)),
  e5_CrawlgateGuard,
  e5_CrawlgateModule,
];
`;
    // node20 only: NestJS 12 ships ES modules alone, which a CommonJS file may require() only under node20.
    expect(typeCheckConsumer(pkg, consumer, ['node20'])).toBe('');
  });
});
