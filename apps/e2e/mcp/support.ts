/*
 * What the MCP server's tests share: a real Express site gated by our middleware in front of the
 * real API and local chain (startGatedSite), funded wallets, and a real MCP client connected to
 * the server in-process (the SDK's linked transport pair).
 */

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { crawlgateExpress } from '@crawlgate/middleware/express';
import express from 'express';
import type { Server } from 'node:http';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { fundUsdc, transfersTo } from '../../../apps/api/test/test-agent';
import { startGatedSite, type GatedSite } from '../middleware/support/gated-site';
import {
  createMcpServer,
  createWalletSession,
  readConfig,
  type SessionOptions,
  type WalletSession,
} from '../../../libs/mcp/src';

export interface PaidSite {
  gated: GatedSite;
  /** http://127.0.0.1:<port>; every page answers "content of <path>" once paid. */
  url: string;
  /** The devchain's USDC as CRAWLGATE_NETWORKS allows it (deployed at run time, so named by address). */
  networks: string;
  /** USDC Transfer events to the site's pay_to so far. */
  transfers(): Promise<{ from: string; value: bigint; hash: string }[]>;
  close(): Promise<void>;
}

export async function startPaidSite(): Promise<PaidSite> {
  const gated = await startGatedSite();
  const app = express();
  app.use(crawlgateExpress(gated.options()));
  app.get('/{*path}', (request, response) => void response.type('text/html').send(`content of ${request.path}`));
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    gated,
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    networks: JSON.stringify([{ network: 'local', asset: gated.app.chain.usdc }]),
    transfers: () => transfersTo(gated.app, gated.payTo),
    async close() {
      await new Promise((resolve) => server.close(resolve));
      await gated.close();
    },
  };
}

/** A fresh private key whose wallet holds `usd` test USDC (none when "0"). */
export async function fundedKey(site: PaidSite, usd = '1'): Promise<`0x${string}`> {
  const key = generatePrivateKey();
  if (usd !== '0') await fundUsdc(site.gated.app, privateKeyToAccount(key).address, usd);
  return key;
}

export interface Connected {
  client: Client;
  session: WalletSession;
  /** What the server logged (it logs to stderr in the binary). */
  logs: string[];
  /** Calls a tool and returns its result with the JSON of its first text block parsed. */
  call(
    name: string,
    args?: Record<string, unknown>,
  ): Promise<{ isError: boolean; json: Record<string, any>; structured: Record<string, any> | undefined }>;
  close(): Promise<void>;
}

/**
 * The server configured from `env` (as the binary reads it), and a real MCP client talking to it;
 * `fetch` replaces the one the server would use.
 */
export async function connect(
  env: Record<string, string>,
  options: Pick<SessionOptions, 'fetch'> = {},
): Promise<Connected> {
  const logs: string[] = [];
  const session = createWalletSession(readConfig(env), { ...options, log: (line) => logs.push(line) });
  const server = createMcpServer(session);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'crawlgate-mcp-test', version: '1.0.0' });
  await client.connect(clientSide);
  return {
    client,
    session,
    logs,
    async call(name, args = {}) {
      const result = await client.callTool({ name, arguments: args });
      const [first] = result.content as { type: string; text: string }[];
      return {
        isError: result.isError === true,
        json: JSON.parse(first.text),
        structured: result.structuredContent as Record<string, any> | undefined,
      };
    },
    async close() {
      await client.close();
      await server.close();
    },
  };
}

/** The environment the binary reads, for a wallet and limits; private networks allowed, as the site is on 127.0.0.1. */
export function envFor(
  site: PaidSite,
  key: string,
  limits: { max?: string; budget?: string; networks?: string } = {},
): Record<string, string> {
  return {
    CRAWLGATE_WALLET_KEY: key,
    CRAWLGATE_MAX_PRICE_USD: limits.max ?? '0.005',
    CRAWLGATE_BUDGET_USD: limits.budget ?? '1',
    CRAWLGATE_NETWORKS: limits.networks ?? site.networks,
    CRAWLGATE_ALLOW_PRIVATE_NETWORKS: 'true',
  };
}
