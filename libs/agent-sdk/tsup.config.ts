/*
 * The published package, built like every @crawlgate/* package (tools/build/tsup-library.ts):
 * ESM (.mjs), CommonJS (.cjs) and types, for any runtime with fetch; viem is a peer (agents bring
 * their own wallet).
 *
 *   npx tsup --config libs/agent-sdk/tsup.config.ts      (from the workspace root)
 */

import { defineConfig } from 'tsup';
import { libraryBuild } from '../../tools/build/tsup-library';

export default defineConfig(libraryBuild(__dirname, { index: 'src/index.ts' }, ['viem']));
