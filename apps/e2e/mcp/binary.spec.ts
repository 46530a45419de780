/*
 * The `crawlgate-mcp` binary as an MCP host runs it: a child process speaking MCP on stdio (or
 * HTTP with --http), its wallet key in the environment. The key must never come back, in any tool
 * result (refusals and failures included) or on stderr; and without its configuration the binary
 * must not start.
 */

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { execFile, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { baseV1Offer } from '../agent-sdk/support/base-offers';
import { envFor, fundedKey, startPaidSite, type PaidSite } from './support';

const ROOT = join(__dirname, '..', '..', '..');
/** The binary from source, as the workspace's scripts run TypeScript. */
const COMMAND = [process.execPath, '-r', '@swc-node/register', join(ROOT, 'libs/mcp/src/cli.ts')] as const;
const SOURCE_ENV = { SWC_NODE_PROJECT: join(ROOT, 'tsconfig.base.json'), PATH: process.env.PATH ?? '' };

describe('the crawlgate-mcp binary', () => {
  let site: PaidSite;
  beforeAll(async () => {
    site = await startPaidSite();
  });
  afterAll(() => site.close());

  it('pays and refuses through its tools without ever showing its wallet key', async () => {
    const key = await fundedKey(site);
    const transport = new StdioClientTransport({
      command: COMMAND[0],
      args: COMMAND.slice(1),
      cwd: ROOT,
      env: { ...SOURCE_ENV, ...envFor(site, key, { max: '0.005', budget: '0.0015' }) },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const client = new Client({ name: 'stdio-test', version: '1.0.0' });
    await client.connect(transport);
    const results: unknown[] = [];
    try {
      const call = async (name: string, args: Record<string, unknown> = {}) => {
        const result = await client.callTool({ name, arguments: args });
        results.push(result);
        return result;
      };
      expect((await call('fetch_page', { url: `${site.url}/cheap/one` })).structuredContent).toMatchObject({
        status: 200,
        paid: { price_usd: '0.001' },
      });
      await call('fetch_page', { url: `${site.url}/cheap/one` });
      expect((await call('fetch_page', { url: `${site.url}/article/pricey` })).isError).toBe(true);
      expect((await call('fetch_page', { url: `${site.url}/cheap/two` })).isError).toBe(true); // over budget
      await call('quote_price', { url: `${site.url}/cheap/three` });
      await call('quote_price', { url: `${site.url}/cheap/three`, source: 'pay.json' });
      await call('fetch_page', { url: 'http://127.0.0.1:1/unreachable' });
      await call('fetch_page', { url: 'javascript:alert(1)' });
      await call('spending');
      results.push(await client.listTools());
    } finally {
      await client.close();
    }
    expect(stderr).toContain('crawlgate-mcp: wallet');
    expect(stderr).toContain(`paid 0.001 USD for ${site.url}/cheap/one`);
    for (const text of [JSON.stringify(results), stderr]) {
      expect(text.toLowerCase()).not.toContain(key.slice(2).toLowerCase());
    }
  });

  it('lets a payment under way finish before it exits on SIGTERM or stdin’s end, within a grace (helper-437)', async () => {
    // It exited at once: the paid answer (and the token it carried) was lost, and the next session paid again.
    const paymentsSeen: (() => void)[] = [];
    const paid = [0, 1].map(() => new Promise<void>((resolve) => paymentsSeen.push(resolve)));
    let payments = 0;
    const answered: ('delivered' | 'client gone')[] = [];
    const slow = createServer((request, response) => {
      if (!request.headers['x-payment'])
        return void response.writeHead(402, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            x402Version: 1,
            accepts: [baseV1Offer(privateKeyToAccount(generatePrivateKey()).address)],
          }),
        );
      paymentsSeen[payments++]?.();
      let gone = false;
      request.socket.once('close', () => (gone = true));
      setTimeout(
        () => {
          answered.push(gone ? 'client gone' : 'delivered');
          response.writeHead(200, { 'content-type': 'text/plain' }).end('the page');
        },
        request.url === '/later' ? 3_000 : 1_500,
      );
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const { child, client } = await startOverHttp({
      CRAWLGATE_WALLET_KEY: generatePrivateKey(),
      CRAWLGATE_MAX_PRICE_USD: '0.01',
      CRAWLGATE_BUDGET_USD: '1',
      CRAWLGATE_NETWORKS: 'base',
      CRAWLGATE_ALLOW_PRIVATE_NETWORKS: 'true',
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      const port = (slow.address() as AddressInfo).port;
      const fetchPage = (path: string) =>
        void client
          .callTool({ name: 'fetch_page', arguments: { url: `http://127.0.0.1:${port}${path}` } })
          .catch(() => undefined);
      fetchPage('/slow');
      await paid[0];
      child.kill('SIGTERM');
      // A call the host starts while the server drains is followed through too.
      fetchPage('/later');
      await paid[1];
      await exited;
      expect(answered).toEqual(['delivered', 'delivered']);
    } finally {
      child.kill('SIGKILL');
      slow.closeAllConnections();
      await new Promise((resolve) => slow.close(resolve));
    }
  }, 30_000);

  it('refuses to start without its configuration, saying what is missing', async () => {
    const run = promisify(execFile);
    const missing = run(COMMAND[0], COMMAND.slice(1), { cwd: ROOT, env: SOURCE_ENV });
    await expect(missing).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('CRAWLGATE_WALLET_KEY') });
    await expect(missing).rejects.toMatchObject({
      stderr: expect.stringMatching(/CRAWLGATE_MAX_PRICE_USD[\s\S]*CRAWLGATE_BUDGET_USD/),
    });

    // A mistyped key is refused without being echoed.
    const key = await fundedKey(site, '0');
    const mistyped = run(COMMAND[0], COMMAND.slice(1), {
      cwd: ROOT,
      env: { ...SOURCE_ENV, ...envFor(site, `${key}ff`) },
    });
    await expect(mistyped).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('CRAWLGATE_WALLET_KEY') });
    const { stderr } = (await mistyped.catch((error: { stderr: string }) => error)) as { stderr: string };
    expect(stderr.toLowerCase()).not.toContain(key.slice(2, 40).toLowerCase());
  });

  it('serves streamable HTTP on 127.0.0.1 with --http, saying where and with which bearer token on stderr', async () => {
    const { child, client } = await startOverHttp(envFor(site, await fundedKey(site, '0')));
    try {
      try {
        expect((await client.callTool({ name: 'spending', arguments: {} })).structuredContent).toMatchObject({
          spent_usd: '0',
          budget_usd: '1',
        });
      } finally {
        await client.close();
      }
    } finally {
      child.kill('SIGTERM');
    }
  });
});

/** The binary serving MCP over HTTP (--http 0) with `env`, and a client connected as its stderr says (URL and bearer token). */
async function startOverHttp(env: Record<string, string>) {
  const child = spawn(COMMAND[0], [...COMMAND.slice(1), '--http', '0'], { cwd: ROOT, env: { ...SOURCE_ENV, ...env } });
  const [url, token] = await new Promise<[string, string]>((resolve, reject) => {
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      const found = /MCP over HTTP at (http:\/\/127\.0\.0\.1:\d+\/mcp); send "Authorization: Bearer ([\w-]+)"/.exec(
        stderr,
      );
      if (found) resolve([found[1], found[2]]);
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code}: ${stderr}`)));
  });
  const client = new Client({ name: 'http-bin-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  return { child, client };
}
