import { DEV_ROLES, deployTestUsdc, startAnvil } from '@crawlgate/devchain';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { createApp } from '../../apps/api/src/app/create-app';
import { createChainContext, type ChainContext } from '../../apps/api/src/chain/chain-context';
import { loadConfig } from '../../apps/api/src/config/config';
import { openDatabase } from '../../apps/api/src/db/database';
import { migrate } from '../../apps/api/src/db/migrator';

export interface BenchApi {
  baseUrl: string;
  chain: ChainContext;
  rpcUrl: string;
  databaseUrl: string;
  schema: string;
  /** JSON call with a client address of its own (the per-IP limits are the spec's, not the benchmark's). */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<any>;
  close(): Promise<void>;
}

/** The real API on PostgreSQL (a schema of its own) and its own local chain, in this process. */
export async function startBenchApi(): Promise<BenchApi> {
  const databaseUrl = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: databaseUrl });
  await admin.connect();
  await admin.query(`CREATE SCHEMA "${schema}"`);
  const anvil = await startAnvil();
  const { usdc } = await deployTestUsdc({ rpcUrl: anvil.rpcUrl });
  const database = await openDatabase({ databaseUrl, schema });
  await migrate(database.sql);
  const config = { ...loadConfig({}), logLevel: 'silent' as const, trustProxy: true };
  config.chain = { ...config.chain, pollingIntervalMs: 20 };
  const chain = createChainContext({ config: config.chain, rpcUrl: anvil.rpcUrl, relayerPrivateKey: DEV_ROLES.relayer.privateKey, usdc });
  const app = await createApp({ config, database, chain, masterKey: randomBytes(32) });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const baseUrl = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  let ip = 0;
  return {
    baseUrl,
    chain,
    rpcUrl: anvil.rpcUrl,
    databaseUrl,
    schema,
    async call(method, path, body, headers = {}) {
      const response = await fetch(baseUrl + path, {
        method,
        headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.77.${(ip >> 8) & 255}.${ip++ & 255}`, ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
      return response.json();
    },
    async close() {
      await app.close();
      await database.close();
      await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
      await admin.end();
      await anvil.stop();
    },
  };
}

/** A publisher with a payout address, for setting up sites. */
export async function benchPublisher(api: BenchApi): Promise<{ auth: Record<string, string> }> {
  const email = `bench-${randomBytes(4).toString('hex')}@example.com`;
  const password = 'benchmark password';
  const registered = await api.call('POST', '/v1/publishers/register', { email, password });
  const auth = { authorization: `Bearer ${registered.api_key}`, 'x-confirm-password': password };
  await api.call('PATCH', '/v1/publishers/me', { payout_address: DEV_ROLES.publisher.address }, auth);
  return { auth };
}

export async function benchSite(api: BenchApi, publisher: { auth: Record<string, string> }, domain: string, price = '0.01') {
  const site = await api.call('POST', '/v1/sites', { domain }, publisher.auth);
  await api.call('PUT', `/v1/sites/${site.site_id}/pricing`, { default_price_usd: price }, publisher.auth);
  return { id: site.site_id as string, token: site.site_token as string, secret: site.access_token_secret as string, kid: site.kid as string, domain };
}
