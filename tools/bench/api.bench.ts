import { signAccessToken } from '@crawlgate/core';
import Fastify from 'fastify';
import { Pool } from 'pg';
import { benchPublisher, benchSite, startBenchApi } from './bench-api';
import { format } from './measure';
import { load, type LoadResult } from './load';

const SITES = 300; // 300 site tokens: 60,000 gates and 30,000 verifies a minute before the spec's per-token limits

/**
 * The API under load on PostgreSQL: POST /v1/gates against a bare Fastify + pg route doing one
 * equivalent INSERT, and POST /v1/access-tokens/verify. Load generator and servers share this
 * process (and its 2 cores), for ours and the baseline alike.
 */
export async function apiBench(): Promise<string> {
  const api = await startBenchApi();
  try {
    const sites = [];
    let publisher = await benchPublisher(api);
    for (let i = 0; i < SITES; i++) {
      // 100 calls a minute per publisher, however many keys it logs in for: a new one every 45 sites.
      if (i > 0 && i % 45 === 0) publisher = await benchPublisher(api);
      sites.push(await benchSite(api, publisher, `site-${i}.example.com`));
    }
    const gates = await load('crawlgate POST /v1/gates', api.baseUrl, sites.map((site, i) => ({ method: 'POST', path: '/v1/gates', headers: { 'x-site-token': site.token }, body: JSON.stringify({ url: `/article/${i}` }) })));
    const now = Math.floor(Date.now() / 1000);
    const verifies = await load(
      'crawlgate POST /v1/access-tokens/verify',
      api.baseUrl,
      sites.map((site) => ({
        method: 'POST',
        path: '/v1/access-tokens/verify',
        headers: { 'x-site-token': site.token },
        body: JSON.stringify({ token: signAccessToken({ gate_id: site.id, site_id: site.id, url: '/a', kid: site.kid, iat: now, exp: now + 600 }, site.secret), url: '/a' }),
      })),
    );
    const rss = process.memoryUsage().rss;
    const baseline = await bareInsertBaseline(api.databaseUrl, api.schema);
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
    await api.close();
  }
}

const row = (r: LoadResult) => `| ${r.name} | ${format(r.requestsPerSecond)} | ${r.p50Ms} | ${r.p99Ms} | ${Object.entries(r.statuses).map(([s, n]) => `${s}×${n}`).join(' ')} |`;

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
