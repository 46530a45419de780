/*
 * The package as a site owner installs it. Builds it once with tsup into a temporary
 * node_modules/@crawlgate/middleware (never libs/middleware/dist, which a developer may be
 * building), beside only its declared dependencies and the frameworks a site would have, outside
 * the workspace so nothing else resolves. Then: require() and import() every entry with plain
 * Node, check what the files import against package.json, and type-check a consumer against the
 * emitted declarations through the `exports` map.
 */

import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const PACKAGE_DIR = join(__dirname, '..');
const ROOT = join(PACKAGE_DIR, '..', '..');
const NAME = '@crawlgate/middleware';

/** Every import path of the package and names it must export (a sample of each entry's API). */
const ENTRIES: Record<string, string[]> = {
  '.': ['createCrawlgate', 'classifyVisitor', 'isAlwaysFreePath', 'buildPayJson', 'CrawlgateApiError', 'PAY_JSON_PATH'],
  './express': ['crawlgateExpress'],
  './fastify': ['crawlgateFastify'],
  './fetch': ['crawlgateFetch'],
  './nest': ['CrawlgateGuard', 'CrawlgateModule'],
};

/** What a site using each adapter already has installed. */
const SITE_PACKAGES = ['express', 'fastify', 'hono', '@nestjs/common', '@nestjs/core', 'reflect-metadata', '@types/node'];

interface PackageJson {
  main: string;
  module: string;
  types: string;
  files: string[];
  exports: Record<string, string | Record<string, Record<string, string>>>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

const manifest = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as PackageJson;
const declared = new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})]);

let site: string;
let installed: string;
let dist: string;

function node(args: string[]): string {
  return execFileSync(process.execPath, args, { cwd: site, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function link(name: string): void {
  const target = join(ROOT, 'node_modules', name);
  const at = join(site, 'node_modules', name);
  if (!existsSync(target) || existsSync(at)) return;
  mkdirSync(dirname(at), { recursive: true });
  symlinkSync(target, at, 'dir');
}

/** The package names a built file imports or requires. */
function importedPackages(code: string): string[] {
  const specifiers = [...code.matchAll(/(?:[}\s]from\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)(["'])([^"'\s,()]+)\1/g)].map((m) => m[2]);
  return specifiers
    .filter((s) => !s.startsWith('.') && !s.startsWith('node:') && !builtinModules.includes(s))
    .map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]));
}

beforeAll(() => {
  site = mkdtempSync(join(tmpdir(), 'crawlgate-site-'));
  installed = join(site, 'node_modules', NAME);
  dist = join(installed, 'dist');
  mkdirSync(installed, { recursive: true });
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules/tsup/dist/cli-default.js'), '--config', join(PACKAGE_DIR, 'tsup.config.ts'), '--out-dir', dist, '--silent'],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  copyFileSync(join(PACKAGE_DIR, 'package.json'), join(installed, 'package.json'));
  for (const name of new Set([...declared, ...SITE_PACKAGES])) link(name);
}, 120_000);

afterAll(() => {
  if (site) rmSync(site, { recursive: true, force: true });
});

describe('the published package', () => {
  it('builds every entry, and its exports map points only at files it ships', () => {
    const targets = [manifest.main, manifest.module, manifest.types];
    for (const [path, conditions] of Object.entries(manifest.exports)) {
      if (path === './package.json') continue;
      expect(typeof conditions).toBe('object');
      for (const condition of ['import', 'require']) {
        const files = (conditions as Record<string, Record<string, string>>)[condition];
        expect(Object.keys(files ?? {})).toEqual(['types', 'default']);
        targets.push(files.types, files.default);
      }
    }
    expect(Object.keys(manifest.exports).sort()).toEqual([...Object.keys(ENTRIES), './package.json'].sort());
    expect(manifest.files).toEqual(['dist']);
    expect(targets.filter((file) => !file.startsWith('./dist/') || !existsSync(join(installed, file)))).toEqual([]);
  });

  it('imports nothing at run time that package.json does not declare', () => {
    const undeclared = readdirSync(dist)
      .filter((file) => /\.(?:mjs|cjs)$/.test(file))
      .flatMap((file) => importedPackages(readFileSync(join(dist, file), 'utf8')).map((name) => `${file}: ${name}`))
      .filter((entry) => !declared.has(entry.split(': ')[1]));
    expect(undeclared).toEqual([]);
  });

  it('bundles @crawlgate/core, keeps NestJS to the nest entry and never mentions Prisma', () => {
    const offending = readdirSync(dist).flatMap((file) => {
      const text = readFileSync(join(dist, file), 'utf8');
      return [
        ...(text.includes('@crawlgate/') ? [`${file}: @crawlgate/`] : []),
        ...(text.includes('@prisma') ? [`${file}: @prisma`] : []),
        ...(!file.startsWith('nest.') && text.includes('@nestjs') ? [`${file}: @nestjs`] : []),
      ];
    });
    expect(offending).toEqual([]);
  });

  it.each(Object.entries(ENTRIES))('require("%s") works in plain Node and exports what it should', (path, names) => {
    const keys = JSON.parse(node(['-e', `console.log(JSON.stringify(Object.keys(require(${JSON.stringify(join(NAME, path))}))))`]));
    expect(keys).toEqual(expect.arrayContaining(names));
  });

  it.each(Object.entries(ENTRIES))('import("%s") works in plain Node and exports what it should', (path, names) => {
    const script = `const m = await import(${JSON.stringify(join(NAME, path))}); console.log(JSON.stringify(Object.keys(m)));`;
    const keys = JSON.parse(node(['--input-type=module', '-e', script]));
    expect(keys).toEqual(expect.arrayContaining(names));
  });

  it('type-checks a consumer, ESM and CommonJS, against the emitted declarations', () => {
    const imports = Object.entries(ENTRIES)
      .map(([path, names], i) => `import { ${names.map((n) => `${n} as e${i}_${n}`).join(', ')} } from '${join(NAME, path)}';`)
      .join('\n');
    const body = `${imports}
import type { BotPolicy, CrawlgateOptions, Visitor } from '${NAME}';

const policy: BotPolicy = { categories: { seo: 'block' }, bots: { GPTBot: 'allow' } };
const visitor: Visitor = e0_classifyVisitor('curl/8.4.0', policy);
export const checks = [
  visitor.kind === 'bot' ? visitor.category : 'human',
  e0_isAlwaysFreePath('/robots.txt'),
  e0_buildPayJson({ site_id: 's', domain: 'd', default_price_usd: '0', rules: [], pricing_version: 0, network: 'base', caip2: 'eip155:8453', chain_id: 8453, asset: '0x', pay_to: null }, 'https://api').payment.caip2,
  e0_PAY_JSON_PATH,
  new e0_CrawlgateApiError('x').message,
  (options: CrawlgateOptions) => [e0_createCrawlgate(options), e1_crawlgateExpress(options), e3_crawlgateFetch(options)],
  e2_crawlgateFastify,
  e4_CrawlgateGuard,
  e4_CrawlgateModule,
];
`;
    writeFileSync(join(site, 'consumer.mts'), body);
    writeFileSync(join(site, 'consumer.cts'), body);
    writeFileSync(
      join(site, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { module: 'node20', moduleResolution: 'node16', target: 'es2022', strict: true, noEmit: true, skipLibCheck: false, types: ['node'] },
        files: ['consumer.mts', 'consumer.cts'],
      }),
    );
    let output = '';
    try {
      execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(site, 'tsconfig.json')], { cwd: site, encoding: 'utf8' });
    } catch (error) {
      output = String((error as { stdout?: string }).stdout ?? error);
    }
    expect(output).toBe('');
  });
});
