/*
 * A publishable @crawlgate/* package as a user installs it, for its packaging spec. The package is
 * built with its own tsup config into a temporary node_modules/<name> (never the package's dist,
 * which a developer may be building), or, under Nx (CRAWLGATE_PACKAGES_BUILT=1, set by the e2e
 * test target, which depends on every package's build), its dist is copied from that build. It sits beside only its declared dependencies and peers and the
 * extra packages a user would have, outside the workspace so nothing else resolves. Then the spec
 * loads it with plain Node, reads what the built files import, checks the `exports` map,
 * type-checks a consumer through it, and packs it as npm publishes it for @arethetypeswrong/cli and
 * publint to check.
 */

import { execFile, execFileSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '..', '..');

export interface Manifest {
  name: string;
  main: string;
  module: string;
  types: string;
  files: string[];
  bin?: Record<string, string>;
  exports: Record<string, string | Record<string, Record<string, string>>>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  engines?: Record<string, string>;
}

export interface InstalledPackage {
  manifest: Manifest;
  /** Dependencies and peers: all the package may import at run time. */
  declared: Set<string>;
  /** The temporary project the package is installed in. */
  site: string;
  /** site/node_modules/<name> */
  installed: string;
  dist: string;
}

/** Symlinks a package from the workspace's node_modules into the site's. */
function link(site: string, name: string): void {
  const target = join(ROOT, 'node_modules', name);
  if (!existsSync(target)) throw new Error(`${name} is not installed in the workspace`);
  const at = join(site, 'node_modules', name);
  mkdirSync(dirname(at), { recursive: true });
  symlinkSync(target, at, 'dir');
}

/**
 * Builds the package in `packageDir` into a fresh site and links its declared dependencies and
 * peers, @types/node (for the consumer type-check) and `extraPackages`.
 */
function installBuilt(packageDir: string, extraPackages: string[] = []): InstalledPackage {
  const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as Manifest;
  const declared = new Set([
    ...Object.keys(manifest.dependencies ?? {}),
    ...Object.keys(manifest.peerDependencies ?? {}),
  ]);
  const site = mkdtempSync(join(tmpdir(), `${manifest.name.replace('@crawlgate/', 'crawlgate-')}-`));
  const installed = join(site, 'node_modules', manifest.name);
  const dist = join(installed, 'dist');
  mkdirSync(installed, { recursive: true });
  // From the workspace root: tsup finds typescript and @swc/core from the working directory.
  if (process.env.CRAWLGATE_PACKAGES_BUILT === '1') cpSync(join(packageDir, 'dist'), dist, { recursive: true });
  else {
    const tsup = join(ROOT, 'node_modules/tsup/dist/cli-default.js');
    execFileSync(
      process.execPath,
      [tsup, '--config', join(packageDir, 'tsup.config.ts'), '--out-dir', dist, '--silent'],
      { cwd: ROOT, stdio: 'pipe' },
    );
  }
  // package.json and the files it lists beside dist (README.md), so `npm pack` packs what npm publishes.
  for (const file of ['package.json', ...manifest.files.filter((file) => file !== 'dist')])
    copyFileSync(join(packageDir, file), join(installed, file));
  for (const name of new Set([...declared, '@types/node', ...extraPackages])) link(site, name);
  return { manifest, declared, site, installed, dist };
}

/**
 * For a spec file: the package installed by beforeAll (the build takes a while) and removed by
 * afterAll. The object returned is filled in once beforeAll has run.
 */
export function installedForSpec(packageDir: string, extraPackages: string[] = []): InstalledPackage {
  const pkg = {} as InstalledPackage;
  beforeAll(() => void Object.assign(pkg, installBuilt(packageDir, extraPackages)), 120_000);
  afterAll(() => {
    if (pkg.site) rmSync(pkg.site, { recursive: true, force: true });
  });
  return pkg;
}

/** Plain Node in the site, with nothing from the test run's environment but PATH. */
export function runNode(
  pkg: InstalledPackage,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, args, {
    cwd: pkg.site,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: pkg.site, ...env },
  });
}

/**
 * Loads `specifier` with require() or import() in plain Node and returns `expression` (JSON), in
 * which `m` is the module: by default its export names.
 */
export async function loadEntry(
  pkg: InstalledPackage,
  how: 'require' | 'import',
  specifier: string,
  expression = 'Object.keys(m)',
): Promise<unknown> {
  const print = `console.log(JSON.stringify(${expression}))`;
  const args =
    how === 'require'
      ? ['-e', `const m = require(${JSON.stringify(specifier)}); ${print}`]
      : ['--input-type=module', '-e', `const m = await import(${JSON.stringify(specifier)}); ${print}`];
  return JSON.parse((await runNode(pkg, args)).stdout);
}

/** The packages a built file imports or requires; a bare builtin ("fs") counts, as Deno and Workers need "node:". */
function importedPackages(code: string): string[] {
  const specifiers = [
    ...code.matchAll(/(?:[}\s]from\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)(["'])([^"'\s,()]+)\1/g),
  ].map((m) => m[2]);
  return specifiers
    .filter((s) => !s.startsWith('.') && !s.startsWith('node:'))
    .map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]));
}

/**
 * "file: package" for every package the built code (.mjs, .cjs) or declarations (.d.ts, .d.mts)
 * import that package.json does not declare: a package only the types import must be declared too
 * (as an optional peer when one entry needs it), or a consumer's type-check fails.
 */
export function undeclaredImports(pkg: InstalledPackage): string[] {
  const code = readdirSync(pkg.dist).filter((file) => /\.(?:[cm]js|d\.m?ts)$/.test(file));
  return code.flatMap((file) =>
    [...new Set(importedPackages(readFileSync(join(pkg.dist, file), 'utf8')))]
      .filter((name) => !pkg.declared.has(name))
      .map((name) => `${file}: ${name}`),
  );
}

/** The files in dist (code and declarations) whose text contains `text`. */
export function distFilesContaining(pkg: InstalledPackage, text: string): string[] {
  return readdirSync(pkg.dist).filter((file) => readFileSync(join(pkg.dist, file), 'utf8').includes(text));
}

/**
 * What is wrong with package.json's entry points: `exports` must have exactly `paths` and
 * ./package.json, each path import and require conditions, each exactly { types, default }; every
 * file that main, module, types, exports and bin name must be a file in dist.
 */
export function exportsMapProblems(pkg: InstalledPackage, paths: string[]): string[] {
  const { manifest } = pkg;
  const problems: string[] = [];
  const expected = [...paths, './package.json'].sort().join(', ');
  if (Object.keys(manifest.exports).sort().join(', ') !== expected) problems.push(`exports: not ${expected}`);
  const targets = [manifest.main, manifest.module, manifest.types, ...Object.values(manifest.bin ?? {})];
  for (const [path, conditions] of Object.entries(manifest.exports)) {
    if (path === './package.json') continue;
    for (const condition of ['import', 'require']) {
      const files = typeof conditions === 'object' ? conditions[condition] : undefined;
      if (!files || Object.keys(files).join() !== 'types,default')
        problems.push(`${path} ${condition}: not { types, default }`);
      else targets.push(files.types, files.default);
    }
  }
  for (const file of targets) {
    if (
      !file.startsWith('./dist/') ||
      !existsSync(join(pkg.installed, file)) ||
      !statSync(join(pkg.installed, file)).isFile()
    )
      problems.push(`${file}: not shipped`);
  }
  return problems;
}

/** The module settings a consumer's tsconfig may have, and the files `source` is checked as under each. */
const CONSUMER_SETTINGS = {
  node16: {
    compilerOptions: { module: 'node16', moduleResolution: 'node16' },
    files: ['consumer.mts', 'consumer.cts'],
  },
  node20: {
    compilerOptions: { module: 'node20', moduleResolution: 'node16' },
    files: ['consumer.mts', 'consumer.cts'],
  },
  // What Next.js and classic NestJS projects still generate: no `exports`, subpaths by typesVersions.
  // TypeScript 6 deprecates it, hence ignoreDeprecations.
  node10: {
    compilerOptions: { module: 'commonjs', moduleResolution: 'node10', ignoreDeprecations: '6.0' },
    files: ['consumer.ts'],
  },
} as const;

/**
 * The package's declarations copied into the site as sources (.d.ts to .ts, .d.mts to .mts), in
 * the package's module format, their paths relative to the site. tsc checks these in full, as a
 * consumer with skipLibCheck off checks the declarations, while skipLibCheck spares it the
 * dependencies' own (viem's, the MCP SDK's and zod's took it up to a minute a package).
 */
function declarationsAsSources(pkg: InstalledPackage): string[] {
  const dir = join(pkg.site, 'declarations');
  mkdirSync(dir, { recursive: true });
  const { type } = JSON.parse(readFileSync(join(pkg.installed, 'package.json'), 'utf8')) as { type?: string };
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: type ?? 'commonjs' }));
  return readdirSync(pkg.dist)
    .filter((file) => /\.d\.[cm]?ts$/.test(file))
    .map((file) => {
      const source = file.replace(/\.d\.([cm]?ts)$/, '.$1');
      copyFileSync(join(pkg.dist, file), join(dir, source));
      return join('declarations', source);
    });
}

/**
 * Type-checks `source` against the emitted declarations under each of the module settings
 * `modules` (by default node16 and node20): under those as an ES module (.mts) and as CommonJS
 * (.cts) through the `exports` map, under node10 as a .ts file; and the declarations themselves
 * under each (declarationsAsSources; under node10 the CommonJS ones alone). Returns tsc's output:
 * empty when it is clean.
 */
export function typeCheckConsumer(
  pkg: InstalledPackage,
  source: string,
  modules: Array<keyof typeof CONSUMER_SETTINGS> = ['node16', 'node20'],
): string {
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  const declarations = declarationsAsSources(pkg);
  return modules
    .map((module) => {
      const { compilerOptions, files } = CONSUMER_SETTINGS[module];
      for (const file of files) writeFileSync(join(pkg.site, file), source);
      const config = join(pkg.site, `tsconfig.${module}.json`);
      const options = {
        ...compilerOptions,
        target: 'es2022',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: ['node'],
        // One line per error (file(line,col): error TSn: ...) wherever it runs: tsc's default varies with the environment.
        pretty: false,
      };
      const checked = module === 'node10' ? declarations.filter((file) => file.endsWith('.ts')) : declarations;
      writeFileSync(config, JSON.stringify({ compilerOptions: options, files: [...files, ...checked] }));
      try {
        return execFileSync(process.execPath, [tsc, '-p', config], { cwd: pkg.site, encoding: 'utf8' });
      } catch (error) {
        return `${module}:\n${String((error as { stdout?: string }).stdout ?? error)}`;
      }
    })
    .join('');
}

/** `npm pack` of the installed package into the site, as `npm publish` would pack it: the tarball's path. */
function pack(pkg: Pick<InstalledPackage, 'installed' | 'site'>): string {
  const out = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', pkg.site], {
    cwd: pkg.installed,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return join(pkg.site, (JSON.parse(out) as Array<{ filename: string }>)[0].filename);
}

interface AttwProblem {
  kind: string;
  entrypoint?: string;
  resolutionKind?: string;
}

/** @arethetypeswrong/cli on the tarball, strict profile (node10, node16 from CJS and from ESM, bundler). */
function attwProblems(tarball: string, cwd: string): string[] {
  const cli = join(ROOT, 'node_modules/@arethetypeswrong/cli/dist/index.js');
  let out: string;
  try {
    out = execFileSync(process.execPath, [cli, tarball, '--format', 'json', '--profile', 'strict'], {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    // Exit code 1 with the report on stdout when it finds problems; anything else is attw failing.
    out = String((error as { stdout?: string }).stdout ?? '');
    if (!out.trim().startsWith('{')) throw error;
  }
  const { analysis } = JSON.parse(out) as { analysis: { problems: AttwProblem[] } };
  return analysis.problems.map((p) =>
    `attw ${p.kind}: ${p.entrypoint ?? ''} ${p.resolutionKind ? `(${p.resolutionKind})` : ''}`.trim(),
  );
}

/** publint's errors and warnings on the tarball (its suggestions are matters of taste, not faults). */
function publintProblems(tarball: string): string[] {
  // publint is ES modules only, so it runs in a child Node rather than inside jest's CommonJS.
  const script = `import { readFileSync } from 'node:fs';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
const data = readFileSync(process.argv[1]);
const { messages, pkg } = await publint({ pack: { tarball: data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) }, level: 'warning' });
console.log(JSON.stringify(messages.map((m) => \`publint \${m.type}: \${formatMessage(m, pkg, { color: false })}\`)));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script, tarball], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return JSON.parse(out) as string[];
}

/**
 * The package packed as npm publishes it, then checked by @arethetypeswrong/cli (types resolve and
 * match the code under every module resolution a consumer may use) and publint (package.json
 * agrees with the files). Every problem either reports; empty when both are clean.
 */
export function packedPackageProblems(pkg: Pick<InstalledPackage, 'installed' | 'site'>): string[] {
  const tarball = pack(pkg);
  return [...attwProblems(tarball, pkg.site), ...publintProblems(tarball)];
}
