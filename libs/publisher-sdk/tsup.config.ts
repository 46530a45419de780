/*
 * The published package, built like @crawlgate/middleware's:
 *   - the library (".") as ESM (.mjs), CommonJS (.cjs) and types (.d.mts/.d.ts), for any runtime
 *     with fetch; @crawlgate/core is bundled in, code and types, so the package installs on its
 *     own; its one runtime dependency, @noble/hashes, stays external;
 *   - the `crawlgate` binary, dist/cli.cjs: CommonJS for Node only (it runs itself when
 *     `require.main === module`), with the client bundled in.
 *
 *   npx tsup --config libs/publisher-sdk/tsup.config.ts      (from the workspace root)
 */

import { join } from 'node:path';
import { defineConfig, type Options } from 'tsup';

const shared: Options = {
  tsconfig: join(__dirname, 'tsconfig.lib.json'),
  outDir: join(__dirname, 'dist'),
  outExtension: ({ format }) => ({ js: format === 'esm' ? '.mjs' : '.cjs' }),
  treeshake: true,
  sourcemap: false,
  noExternal: [/^@crawlgate\//],
  // tsup would strip "node:" from imports; Deno and Workers (nodejs_compat) need it.
  removeNodeProtocol: false,
  external: ['@noble/hashes', /^@noble\/hashes\//, /^node:/],
};

export default defineConfig([
  {
    ...shared,
    entry: { index: join(__dirname, 'src/index.ts') },
    format: ['esm', 'cjs'],
    platform: 'neutral',
    target: 'es2022',
    dts: { resolve: [/^@crawlgate\//] },
    // Both builds write to dist at once: this one cleans it but leaves the other's output alone.
    clean: ['!cli.cjs'],
  },
  {
    ...shared,
    entry: { cli: join(__dirname, 'src/cli/main.ts') },
    format: ['cjs'],
    platform: 'node',
    target: 'node20',
    clean: false,
  },
]);
