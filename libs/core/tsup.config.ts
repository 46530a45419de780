/*
 * Core is not published on its own: every @crawlgate/* package bundles it (tools/build/tsup-library.ts).
 * This build proves it compiles on its own, platform neutral, the
 * way the packages bundle it.
 *
 *   npx tsup --config libs/core/tsup.config.ts      (from the workspace root)
 */

import { defineConfig } from 'tsup';
import { libraryBuild } from '../../tools/build/tsup-library';

export default defineConfig(libraryBuild(__dirname, { index: 'src/index.ts' }));
