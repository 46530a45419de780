import { DEV_ROLES, deployTestUsdc, placeBatchSettlement, startAnvil } from '@crawlgate/devchain';
import { payoutProofMessage } from '@crawlgate/core';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import type { Address } from 'viem';
import { openDatabase } from '../../apps/api/src/db/database';
import { migrate } from '../../apps/api/src/db/migrator';
import { listenBenchApp, type BenchApp } from './bench-app';
import { builtApiServer } from './built-api-server';
import { startChild } from './child';
import { SERVER_CPU } from './pinning';

/** Where a benchmark's API keeps its data: a PostgreSQL schema of its own, and its own local chain. */
export interface BenchStack {
  databaseUrl: string;
  schema: string;
  rpcUrl: string;
  usdc: Address;
  /** One key for every API started on this stack, so that each reads the others' sites. */
  masterKey: string;
  close(): Promise<void>;
}

export interface BenchApi {
  baseUrl: string;
  rpcUrl: string;
  databaseUrl: string;
  schema: string;
  /** The API's process id, when it runs in a process of its own. */
  pid?: number;
  /** JSON call with a client address of its own (the per-IP limits are the spec's, not the benchmark's). */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<any>;
  close(): Promise<void>;
}

export async function startBenchStack(): Promise<BenchStack> {
  const databaseUrl = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: databaseUrl });
  await admin.connect();
  await admin.query(`CREATE SCHEMA "${schema}"`);
  const anvil = await startAnvil();
  const { usdc } = await deployTestUsdc({ rpcUrl: anvil.rpcUrl });
  // x402's batch-settlement escrow where @x402/evm and @crawlgate/agent expect it, as the API does on `local`.
  await placeBatchSettlement({ rpcUrl: anvil.rpcUrl });
  const database = await openDatabase({ databaseUrl, schema });
  await migrate(database.sql);
  await database.close();
  return {
    databaseUrl,
    schema,
    rpcUrl: anvil.rpcUrl,
    usdc,
    masterKey: randomBytes(32).toString('hex'),
    async close() {
      await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
      await admin.end();
      await anvil.stop();
    },
  };
}

export type InProcessBenchApi = BenchApi & Pick<BenchApp, 'chain' | 'claim'>;

/** The real API on PostgreSQL (a schema of its own) and its own local chain, in this process. */
export async function startBenchApi(): Promise<InProcessBenchApi> {
  const stack = await startBenchStack();
  const app = await listenBenchApp(stack);
  return {
    ...apiClient(`http://127.0.0.1:${app.port}`, stack),
    chain: app.chain,
    claim: app.claim,
    async close() {
      await app.close();
      await stack.close();
    },
  };
}

/** The real API on `stack` in a process of its own (api-server.ts, built as for `npm start`), pinned to the server's CPU. */
export async function startBenchApiProcess(
  stack: BenchStack,
  { nodeArgs = [], pinned = true }: { nodeArgs?: string[]; pinned?: boolean } = {},
): Promise<BenchApi & { pid: number }> {
  const { close: _close, ...settings } = stack;
  const child = startChild(await builtApiServer(), {
    cpu: pinned ? SERVER_CPU : undefined,
    nodeArgs,
    env: { BENCH_STACK: JSON.stringify(settings) },
  });
  const port = Number(await child.readLine());
  return { ...apiClient(`http://127.0.0.1:${port}`, stack), pid: child.pid, close: () => child.close() };
}

function apiClient(
  baseUrl: string,
  stack: Pick<BenchStack, 'rpcUrl' | 'databaseUrl' | 'schema'>,
): Omit<BenchApi, 'close'> {
  let ip = 0;
  return {
    baseUrl,
    rpcUrl: stack.rpcUrl,
    databaseUrl: stack.databaseUrl,
    schema: stack.schema,
    async call(method, path, body, headers = {}) {
      const response = await fetch(baseUrl + path, {
        method,
        headers: {
          'content-type': 'application/json',
          'x-forwarded-for': `10.77.${(ip >> 8) & 255}.${ip++ & 255}`,
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
      return response.json();
    },
  };
}

/** A publisher with a payout address, for setting up sites. */
export async function benchPublisher(api: Pick<BenchApi, 'call'>): Promise<{ auth: Record<string, string> }> {
  const email = `bench-${randomBytes(4).toString('hex')}@example.com`;
  const password = 'benchmark password';
  const registered = await api.call('POST', '/v1/publishers/register', { email, password });
  const auth = { authorization: `Bearer ${registered.api_key}`, 'x-confirm-password': password };
  // Every bench publisher names the dev publisher's address: each proves it holds it.
  const payee = DEV_ROLES.publisher;
  const payout_proof = await payee.account.signMessage({
    message: payoutProofMessage(payee.address, registered.publisher_id),
  });
  await api.call('PATCH', '/v1/publishers/me', { payout_address: payee.address, payout_proof }, auth);
  return { auth };
}

export async function benchSite(
  api: Pick<BenchApi, 'call'>,
  publisher: { auth: Record<string, string> },
  domain: string,
  price = '0.01',
) {
  const site = await api.call('POST', '/v1/sites', { domain }, publisher.auth);
  await api.call('PUT', `/v1/sites/${site.site_id}/pricing`, { default_price_usd: price }, publisher.auth);
  return {
    id: site.site_id as string,
    token: site.site_token as string,
    secret: site.access_token_secret as string,
    kid: site.kid as string,
    domain,
  };
}
