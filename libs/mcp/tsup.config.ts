/*
 * The published package, built like every @crawlgate/* package (tools/build/tsup-library.ts):
 *   - the library (".") as ESM (.mjs), CommonJS (.cjs) and types, for Node (the transports are Node's);
 *   - the `crawlgate-mcp` binary, dist/cli.cjs: CommonJS for Node.
 * @crawlgate/agent, @crawlgate/core and @crawlgate/middleware's Node fetch for public addresses
 * (publicAddressFetch, from its ./node entry) are bundled in; the MCP SDK, zod and viem are dependencies.
 *
 *   npx tsup --config libs/mcp/tsup.config.ts      (from the workspace root)
 */

import { join } from 'node:path';
import { defineConfig } from 'tsup';
import { libraryBuild, packageBuild } from '../../tools/build/tsup-library';

const EXTERNAL = ['@modelcontextprotocol/sdk', 'zod', 'viem'];

export default defineConfig([
  {
    ...libraryBuild(__dirname, { index: 'src/index.ts' }, EXTERNAL),
    // Both builds write to dist at once: this one cleans it but leaves the other's output alone.
    clean: ['!cli.cjs'],
  },
  {
    ...packageBuild(__dirname, EXTERNAL),
    entry: { cli: join(__dirname, 'src/cli.ts') },
    format: ['cjs'],
    platform: 'node',
    target: 'node20',
    clean: false,
  },
]);
