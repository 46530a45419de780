/*
 * The local chain for development and tests (private, never published): a Node build for the
 * demo and tools that run outside the workspace's TypeScript loader.
 *
 *   npx tsup --config libs/devchain/tsup.config.ts      (from the workspace root)
 */

import { join } from 'node:path';
import { defineConfig } from 'tsup';
import { packageBuild } from '../../tools/build/tsup-library';

export default defineConfig({
  ...packageBuild(__dirname, ['viem', '@foundry-rs/anvil', 'solc']),
  entry: { index: join(__dirname, 'src/index.ts') },
  format: ['cjs'],
  platform: 'node',
  target: 'node20',
  clean: true,
});
