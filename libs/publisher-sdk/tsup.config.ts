/*
 * The published package, built like every @crawlgate/* package (tools/build/tsup-library.ts):
 *   - the library (".") as ESM (.mjs), CommonJS (.cjs) and types (.d.mts/.d.ts), for any runtime
 *     with fetch;
 *   - the `crawlgate` binary, dist/cli.cjs: CommonJS for Node only (it runs itself when
 *     `require.main === module`), with the client bundled in.
 *
 *   npx tsup --config libs/publisher-sdk/tsup.config.ts      (from the workspace root)
 */

import { join } from 'node:path';
import { defineConfig } from 'tsup';
import { libraryBuild, packageBuild } from '../../tools/build/tsup-library';

export default defineConfig([
  {
    ...libraryBuild(__dirname, { index: 'src/index.ts' }),
    // Both builds write to dist at once: this one cleans it but leaves the other's output alone.
    clean: ['!cli.cjs'],
  },
  {
    ...packageBuild(__dirname),
    entry: { cli: join(__dirname, 'src/cli/main.ts') },
    format: ['cjs'],
    platform: 'node',
    target: 'node20',
    clean: false,
  },
]);
