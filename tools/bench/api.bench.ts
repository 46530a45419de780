import { signAccessToken } from '@crawlgate/core';
import { DEV_ROLES, deployTestUsdc, startAnvil } from '@crawlgate/devchain';
import Fastify from 'fastify';
import { randomBytes } from 'node:crypto';
import { Client, Pool } from 'pg';
import { createApp } from '../../apps/api/src/app/create-app';
import { createChainContext } from '../../apps/api/src/chain/chain-context';
import { loadConfig } from '../../apps/api/src/config/config';
import { openDatabase } from '../../apps/api/src/db/database';
import { migrate } from '../../apps/api/src/db/migrator';
import { format } from './measure';
import { load, type LoadResult } from './load';

const SITES = 300; // 300 site tokens: 60,000 gates and 30,000 verifies a minute before the spec's per-token limits

/**
 * The API under load on PostgreSQL: POST /v1/gates against a bare Fastify + pg route doing one
 * equivalent INSERT, and POST /v1/access-tokens/verify. Load generator and servers share this
 * process (and its 2 cores), for ours and the baseline alike.
 */
export async function apiBench(): Promise<string> {
  const url = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA "${schema}"`);
  const anvil = await startAnvil();
  const { usdc } = await deployTestUsdc({ rpcUrl: anvil.rpcUrl });
  const database = await openDatabase({ databaseUrl: url, schema });
  try {
    await migrate(database.sql);
    const config = { ...loadConfig({}), logLevel: 'silent' as const, trustProxy: true };
    const chain = createChainContext({ config: config.chain, rpcUrl: anvil.rpcUrl, relayerPrivateKey: DEV_ROLES.relayer.privateKey, usdc });
    const app = await createApp({ config, database, chain, masterKey: randomBytes(32) });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    const sites = await setUp(base);

    const gates = await load('crawlgate POST /v1/gates', base, sites.map((site, i) => ({ method: 'POST', path: '/v1/gates', headers: { 'x-site-token': site.token }, body: JSON.stringify({ url: `/article/${i}` }) })));
    const now = Math.floor(Date.now() / 1000);
    const verifies = await load(
      'crawlgate POST /v1/access-tokens/verify',
      base,
      sites.map((site) => ({
        method: 'POST',
        path: '/v1/access-tokens/verify',
        headers: { 'x-site-token': site.token },
        body: JSON.stringify({ token: signAccessToken({ gate_id: site.id, site_id: site.id, url: '/a', kid: site.kid, iat: now, exp: now + 600 }, site.secret), url: '/a' }),
      })),
    );
    const rss = process.memoryUsage().rss;
    await app.close();

    const baseline = await bareInsertBaseline(url, schema);
    return [
      '### API on PostgreSQL',
      '',
      '| case | req/s | p50 ms | p99 ms | statuses |',
      '|---|---:|---:|---:|---|',
      ...[gates, baseline, verifies].map(row),
      '',
      `Ratio POST /v1/gates ÷ bare Fastify + pg INSERT: **${format(gates.requestsPerSecond / baseline.requestsPerSecond, 2)}**. ` +
        `RSS of the process (API + load generator) after the runs: ${format(rss / 1024 / 1024)} MiB.`,
    ].join('\n');
  } finally {
    await database.close();
    await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
    await admin.end();
    await anvil.stop();
  }
}

const row = (r: LoadResult) => `| ${r.name} | ${format(r.requestsPerSecond)} | ${r.p50Ms} | ${r.p99Ms} | ${Object.entries(r.statuses).map(([s, n]) => `${s}×${n}`).join(' ')} |`;

async function setUp(base: string): Promise<{ id: string; token: string; secret: string; kid: string }[]> {
  const call = async (method: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<any> => {
    const response = await fetch(base + path, { method, headers: { 'content-type': 'application/json', 'x-forwarded-for': '10.9.9.9', ...headers }, body: JSON.stringify(body) });
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  const publisher = await call('POST', '/v1/publishers/register', { email: 'bench@example.com', password: 'benchmark password' });
  const auth = { authorization: `Bearer ${publisher.api_key}`, 'x-confirm-password': 'benchmark password' };
  await call('PATCH', '/v1/publishers/me', { payout_address: DEV_ROLES.publisher.address }, auth);
  const sites = [];
  for (let i = 0; i < SITES; i++) {
    // 100 calls a minute per key: re-login (rotating the key) keeps set-up within the spec's limits.
    if (i > 0 && i % 45 === 0) auth.authorization = `Bearer ${(await call('POST', '/v1/publishers/login', { email: 'bench@example.com', password: 'benchmark password' }, { 'x-forwarded-for': `10.8.${i}.1` })).api_key}`;
    const site = await call('POST', '/v1/sites', { domain: `site-${i}.example.com` }, auth);
    await call('PUT', `/v1/sites/${site.site_id}/pricing`, { default_price_usd: '0.01' }, auth);
    sites.push({ id: site.site_id, token: site.site_token, secret: site.access_token_secret, kid: site.kid });
  }
  return sites;
}

/** The least a gate endpoint can do: one INSERT of a comparable row, answered 402 with its id. */
async function bareInsertBaseline(url: string, schema: string): Promise<LoadResult> {
  const pool = new Pool({ connectionString: url, max: 10, options: `-c search_path="${schema}"` });
  await pool.query('CREATE TABLE bare_gates (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), site_id text NOT NULL, url text NOT NULL, price_micros bigint NOT NULL, created_at timestamptz NOT NULL DEFAULT now())');
  const server = Fastify();
  server.post('/gates', async (request, reply) => {
    const { rows } = await pool.query('INSERT INTO bare_gates (site_id, url, price_micros) VALUES ($1, $2, $3) RETURNING id', [request.headers['x-site-token'], (request.body as { url: string }).url, 10000]);
    return reply.status(402).send({ id: rows[0].id });
  });
  await server.listen({ port: 0, host: '127.0.0.1' });
  const address = server.server.address() as { port: number };
  try {
    return await load('bare Fastify + pg INSERT (baseline)', `http://127.0.0.1:${address.port}`, [{ method: 'POST', path: '/gates', headers: { 'x-site-token': 'st_x' }, body: JSON.stringify({ url: '/article/1' }) }]);
  } finally {
    await server.close();
    await pool.end();
  }
}
