/*
 * The published package: one entry per import path (".", "./express", "./fastify", "./fetch",
 * "./nest") as ESM (.mjs), CommonJS (.cjs) and types (.d.mts, .d.ts). @crawlgate/core is bundled
 * in, code and types, so the package installs on its own; its one runtime dependency,
 * @noble/hashes, stays external. Frameworks are peers the site already has.
 *
 *   npx tsup --config libs/middleware/tsup.config.ts      (from the workspace root)
 *
 * Run it inside the workspace: tsup looks for typescript (d.ts) and @swc/core (decorator metadata
 * for the Nest entry) from the working directory, and without swc drops the metadata silently.
 */

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'tsup';

const ROOT = join(__dirname, '..', '..');

const ENTRIES: Record<string, string> = {
  index: 'src/index.ts',
  express: 'src/adapters/express.ts',
  fastify: 'src/adapters/fastify.ts',
  fetch: 'src/adapters/fetch.ts',
  nest: 'src/adapters/nest.ts',
};

// Only those that exist, so the package builds while adapters are being written; the packaging
// spec checks the full list.
const entry = Object.fromEntries(
  Object.entries(ENTRIES)
    .map(([name, file]) => [name, join(__dirname, file)] as const)
    .filter(([, file]) => existsSync(file)),
);

export default defineConfig({
  entry,
  outDir: join(__dirname, 'dist'),
  tsconfig: join(__dirname, 'tsconfig.lib.json'),
  format: ['esm', 'cjs'],
  outExtension: ({ format }) => ({ js: format === 'esm' ? '.mjs' : '.cjs' }),
  platform: 'neutral',
  target: 'es2022',
  // tsup hands the tsconfig's relative baseUrl and rootDir to the d.ts build as if relative to the
  // working directory; absolute ones make the build work from any directory.
  dts: { resolve: [/^@crawlgate\//], compilerOptions: { baseUrl: ROOT, rootDir: ROOT } },
  // Shared code lives in chunks both ways, so the adapters and the main entry share one copy (and its state).
  splitting: true,
  treeshake: true,
  clean: true,
  sourcemap: false,
  noExternal: [/^@crawlgate\//],
  // tsup would strip "node:" from imports; Deno and Workers (nodejs_compat) need it.
  removeNodeProtocol: false,
  external: ['@noble/hashes', /^@noble\/hashes\//, '@nestjs/common', '@nestjs/core', 'express', 'fastify', 'hono', /^node:/],
});
