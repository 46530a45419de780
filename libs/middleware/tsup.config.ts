/*
 * The published package: one entry per import path (".", "./express", "./fastify", "./fetch",
 * "./hono", "./nest", "./node"), built like every @crawlgate/* package (tools/build/tsup-library.ts). Frameworks are
 * peers the site already has.
 *
 *   npx tsup --config libs/middleware/tsup.config.ts      (from the workspace root)
 *
 * Run it inside the workspace: tsup looks for typescript (d.ts) and @swc/core (decorator metadata
 * for the Nest entry) from the working directory, and without swc drops the metadata silently.
 */

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'tsup';
import { libraryBuild } from '../../tools/build/tsup-library';

const ENTRIES: Record<string, string> = {
  index: 'src/index.ts',
  express: 'src/adapters/express.ts',
  fastify: 'src/adapters/fastify.ts',
  fetch: 'src/adapters/fetch.ts',
  hono: 'src/adapters/hono.ts',
  nest: 'src/adapters/nest.ts',
  node: 'src/adapters/node.ts',
};

// Only those that exist, so the package builds while adapters are being written; the packaging
// spec checks the full list.
const entry = Object.fromEntries(Object.entries(ENTRIES).filter(([, file]) => existsSync(join(__dirname, file))));

export default defineConfig({
  ...libraryBuild(__dirname, entry, ['@nestjs/common', '@nestjs/core', 'express', 'fastify', 'hono']),
  // Shared code lives in chunks both ways, so the adapters and the main entry share one copy (and its state).
  splitting: true,
});
