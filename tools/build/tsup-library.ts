/*
 * How every publishable @crawlgate/* package is built with tsup: ESM (.mjs), CommonJS (.cjs) and
 * types (.d.mts/.d.ts) for any runtime with fetch. @crawlgate/core is bundled in, code and types,
 * so a package installs on its own; its one runtime dependency, @noble/hashes, stays external, and
 * so do the peers the user already has.
 *
 * A package's tsup.config.ts imports this by a relative path (tsup bundles config files, so that
 * works) and adds what is its own: entries, peers, splitting, a second build.
 */

import { join } from 'node:path';
import type { Options } from 'tsup';

const ROOT = join(__dirname, '..', '..');

/** A package name and its subpaths ("viem", "viem/accounts"). */
function withSubpaths(name: string): (string | RegExp)[] {
  return [name, new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}/`)];
}

/**
 * What every build of the package shares, the library's and any other (a CLI): where it reads
 * and writes, file extensions, what is bundled and what is not.
 */
export function packageBuild(packageDir: string, peers: string[] = []): Options {
  return {
    tsconfig: join(packageDir, 'tsconfig.lib.json'),
    outDir: join(packageDir, 'dist'),
    outExtension: ({ format }) => ({ js: format === 'esm' ? '.mjs' : '.cjs' }),
    treeshake: true,
    sourcemap: false,
    noExternal: [/^@crawlgate\//],
    // tsup would strip "node:" from imports; Deno and Workers (nodejs_compat) need it.
    removeNodeProtocol: false,
    external: [...['@noble/hashes', ...peers].flatMap(withSubpaths), /^node:/],
  };
}

/** The library build: `entry` maps output names to files under the package folder. */
export function libraryBuild(packageDir: string, entry: Record<string, string>, peers: string[] = []): Options {
  return {
    ...packageBuild(packageDir, peers),
    entry: Object.fromEntries(Object.entries(entry).map(([name, file]) => [name, join(packageDir, file)])),
    format: ['esm', 'cjs'],
    platform: 'neutral',
    target: 'es2022',
    // tsup hands the tsconfig's relative baseUrl and rootDir to the d.ts build as if relative to the
    // working directory; absolute ones make the build work from any directory.
    dts: { resolve: [/^@crawlgate\//], compilerOptions: { baseUrl: ROOT, rootDir: ROOT } },
    clean: true,
  };
}
