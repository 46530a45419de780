/*
 * The published package, built like @crawlgate/middleware's and @crawlgate/publisher's: ESM
 * (.mjs), CommonJS (.cjs) and types, for any runtime with fetch. @crawlgate/core is bundled in,
 * code and types, so the package installs on its own; @noble/hashes stays an external
 * dependency and viem a peer (agents bring their own wallet).
 *
 *   npx tsup --config libs/agent-sdk/tsup.config.ts      (from the workspace root)
 */

import { join } from 'node:path';
import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: join(__dirname, 'src/index.ts') },
  outDir: join(__dirname, 'dist'),
  tsconfig: join(__dirname, 'tsconfig.lib.json'),
  format: ['esm', 'cjs'],
  outExtension: ({ format }) => ({ js: format === 'esm' ? '.mjs' : '.cjs' }),
  platform: 'neutral',
  target: 'es2022',
  dts: { resolve: [/^@crawlgate\//] },
  treeshake: true,
  clean: true,
  sourcemap: false,
  noExternal: [/^@crawlgate\//],
  removeNodeProtocol: false,
  external: ['@noble/hashes', /^@noble\/hashes\//, 'viem', /^viem\//, /^node:/],
});
