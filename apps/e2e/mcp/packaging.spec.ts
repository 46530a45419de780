/*
 * The package as an MCP host's user installs it (tools/testing/published-package.ts): built once,
 * beside only its declared dependencies (the MCP SDK, zod, viem, @noble/hashes). The library loads
 * both ways in plain Node, its declarations type-check a consumer, and the built `crawlgate-mcp`
 * binary serves a real MCP client on stdio while paying a gated site on the local chain.
 */

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { join } from 'node:path';
import {
  exportsMapProblems,
  installedForSpec,
  loadEntry,
  packedPackageProblems,
  runNode,
  typeCheckConsumer,
  undeclaredImports,
} from '../../../tools/testing/published-package';
import { envFor, fundedKey, startPaidSite } from './support';

const EXPORTS = [
  'ConfigError',
  'DEFAULT_USER_AGENT',
  'createMcpServer',
  'createWalletSession',
  'describeSession',
  'readConfig',
  'startHttpServer',
];

const pkg = installedForSpec(join(__dirname, '..', '..', '..', 'libs', 'mcp'));

describe('the published package', () => {
  it('ships every file package.json points at, and imports only what it declares (@crawlgate/agent, core and the middleware’s public-address fetch are bundled)', () => {
    expect(exportsMapProblems(pkg, ['.'])).toEqual([]);
    expect(pkg.manifest.bin).toEqual({ 'crawlgate-mcp': './dist/cli.cjs' });
    expect(undeclaredImports(pkg)).toEqual([]);
  });

  it('requires Node 20 and packs clean: @arethetypeswrong/cli (node10, node16 from CJS and ESM, bundler) and publint find nothing', () => {
    expect(pkg.manifest.engines).toEqual({ node: '>=20' });
    expect(packedPackageProblems(pkg)).toEqual([]);
  }, 60_000);

  it.each(['require', 'import'] as const)('%s() works in plain Node and exports what it should', async (how) => {
    expect(((await loadEntry(pkg, how, pkg.manifest.name)) as string[]).sort()).toEqual(EXPORTS);
  });

  it('type-checks a consumer, ESM and CommonJS, against the emitted declarations', () => {
    const consumer = `import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ConfigError, createMcpServer, createWalletSession, readConfig, startHttpServer, type FetchedPage, type HttpServer, type Quote, type Refusal, type WalletSession } from '${pkg.manifest.name}';

export async function run(env: Record<string, string | undefined>): Promise<[McpServer, HttpServer] | string[]> {
  try {
    const session: WalletSession = createWalletSession(readConfig(env), { log: (line: string) => console.error(line) });
    return [createMcpServer(session), await startHttpServer(session, { port: 0 })];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}
export function summary(quote: Quote, page: FetchedPage, refusal: Refusal): string {
  return \`\${quote.price_usd} \${quote.within_budget} \${page.paid?.tx_hash ?? 'unpaid'} \${refusal.code}\`;
}
`;
    // node20 only: the MCP SDK's and viem's declarations are ES modules, which CommonJS may require() only under node20.
    expect(typeCheckConsumer(pkg, consumer, ['node20'])).toBe('');
  });

  it('the binary prints its version and usage, and will not start without its configuration', async () => {
    const bin = join(pkg.installed, pkg.manifest.bin!['crawlgate-mcp']);
    expect((await runNode(pkg, [bin, '--version'])).stdout).toBe(
      `${(await import('../../../libs/mcp/package.json')).version}\n`,
    );
    expect((await runNode(pkg, [bin, '--help'])).stdout).toContain('CRAWLGATE_WALLET_KEY');
    await expect(runNode(pkg, [bin])).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('CRAWLGATE_WALLET_KEY is not set'),
    });
    await expect(runNode(pkg, [bin, '--htp', '1'])).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('Usage: crawlgate-mcp'),
    });
  });

  it('the built binary serves an MCP client on stdio and pays a gated site', async () => {
    const site = await startPaidSite();
    try {
      const key = await fundedKey(site);
      const bin = join(pkg.installed, pkg.manifest.bin!['crawlgate-mcp']);
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [bin],
        cwd: pkg.site,
        env: { PATH: process.env.PATH ?? '', HOME: pkg.site, ...envFor(site, key) },
        stderr: 'pipe',
      });
      const client = new Client({ name: 'packaging-test', version: '1.0.0' });
      await client.connect(transport);
      try {
        expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual([
          'fetch_page',
          'quote_price',
          'spending',
        ]);
        const page = await client.callTool({ name: 'fetch_page', arguments: { url: `${site.url}/cheap/installed` } });
        expect(page.structuredContent).toMatchObject({
          status: 200,
          text: 'content of /cheap/installed',
          paid: { price_usd: '0.001' },
        });
      } finally {
        await client.close();
      }
    } finally {
      await site.close();
    }
  });
});
