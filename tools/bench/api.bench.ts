import { signAccessToken } from '@crawlgate/core';
import { Client } from 'pg';
import {
  benchPublisher,
  benchSite,
  startBenchApiProcess,
  startBenchStack,
  type BenchApi,
  type BenchStack,
} from './bench-api';
import { startChild } from './child';
import { pairedGoals, type BenchResult } from './goals';
import { startLoadGenerator, type LoadGenerator } from './load-generator';
import type { LoadJob } from './load-worker';
import { alternate, pairedTable, PAIRS, ROUND_SECONDS, type PairedRow, type ServerTime } from './paired';
import { pinning, SERVER_CPU } from './pinning';
import { medianTime, primeEach, round, type BenchServer } from './rounds';

// Each pair starts fresh API processes, whose rate limits (in memory) start empty. Each of the 32
// connections walks the site tokens from the first, in the warm-up and again in the round: 2,400
// keep each token under its limits (200 gates, 100 verifies a minute) up to ~15,000 req/s.
const SITES = 2400;
const CONNECTIONS = 32;
const WARM_UP_SECONDS = 2;

/**
 * The API on PostgreSQL, each server in a process of its own and autocannon in another:
 * POST /v1/gates and POST /v1/access-tokens/verify, each against a bare Fastify + pg route doing
 * one comparable INSERT (the least a gate endpoint that stores something can do), in alternating
 * rounds on fresh processes, median of the pairs' ratios with their spread.
 */
export async function apiBench(): Promise<BenchResult> {
  const stack = await startBenchStack();
  const loadgen = startLoadGenerator();
  try {
    await createBareTable(stack);
    const sites = await createSites(stack);
    const now = Math.floor(Date.now() / 1000);
    const gates: LoadJob['requests'] = sites.map((site, i) => ({
      method: 'POST',
      path: '/v1/gates',
      headers: { 'x-site-token': site.token },
      body: JSON.stringify({ url: `/article/${i}` }),
    }));
    const verifies: LoadJob['requests'] = sites.map((site) => ({
      method: 'POST',
      path: '/v1/access-tokens/verify',
      headers: { 'x-site-token': site.token },
      body: JSON.stringify({
        token: signAccessToken(
          { gate_id: site.id, site_id: site.id, url: '/a', kid: site.kid, iat: now, exp: now + 3600 },
          site.secret,
        ),
        url: '/a',
      }),
    }));
    const bare = () => startBareInsert(stack);
    const api = async () => asServer(await startBenchApiProcess(stack));
    const rows: PairedRow[] = [
      await figure(loadgen, 'POST /v1/gates (a gate signed, no row written)', { bare, ours: api }, gates, 402, 1.0),
      await figure(loadgen, 'POST /v1/access-tokens/verify', { bare, ours: api }, verifies, 200, 1.0),
    ];
    const report = [
      pairedTable('API on PostgreSQL ÷ bare Fastify + pg INSERT (servers in their own processes)', 'req/s', rows),
      '',
      `The API (Nest on Fastify, as \`npm start\` runs it, on a PostgreSQL schema of its own) and the baseline each run alone in a Node process, autocannon in another; ${pinning.note}. ` +
        `${CONNECTIONS} connections over ${SITES} site tokens; per figure ${PAIRS} pairs, each on a fresh baseline and a fresh API process: each token used once (the API then holds every site's prices and secrets, as a running instance does), a ${WARM_UP_SECONDS} s warm-up of each, then a ${ROUND_SECONDS} s round of each, baseline then ours. ` +
        "Baseline: Fastify and pg (10 connections, as the API's pool), one INSERT … RETURNING id into a table like the old gates table, answered 402. " +
        'A round with any other answer than the expected one (a 429 included) fails the run.',
    ].join('\n');
    return { report, goals: pairedGoals(rows) };
  } finally {
    await loadgen.close();
    await stack.close();
  }
}

/** Sites to spread the load over, set up through an API process of their own. */
async function createSites(stack: BenchStack) {
  const api = await startBenchApiProcess(stack);
  try {
    const sites = [];
    let publisher = await benchPublisher(api);
    for (let i = 0; i < SITES; i++) {
      // 100 calls a minute per publisher, however many keys it logs in for: a new one every 45 sites.
      if (i > 0 && i % 45 === 0) publisher = await benchPublisher(api);
      sites.push(await benchSite(api, publisher, `site-${i}.example.com`));
    }
    return sites;
  } finally {
    await api.close();
  }
}

async function createBareTable(stack: BenchStack): Promise<void> {
  const client = new Client({ connectionString: stack.databaseUrl, options: `-c search_path="${stack.schema}"` });
  await client.connect();
  try {
    await client.query(
      'CREATE TABLE bare_gates (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), site_id text NOT NULL, url text NOT NULL, price_micros bigint NOT NULL, created_at timestamptz NOT NULL DEFAULT now())',
    );
  } finally {
    await client.end();
  }
}

async function startBareInsert(stack: BenchStack): Promise<BenchServer> {
  const child = startChild('bare-insert-server.ts', {
    cpu: SERVER_CPU,
    env: { BENCH_STACK: JSON.stringify({ databaseUrl: stack.databaseUrl, schema: stack.schema }) },
  });
  const port = Number(await child.readLine());
  return { url: `http://127.0.0.1:${port}`, pid: child.pid, close: () => child.close() };
}

const asServer = (api: BenchApi): BenchServer => ({ url: api.baseUrl, pid: api.pid!, close: () => api.close() });

/** One figure: pairs of fresh processes, each warmed up, then a round of the baseline and one of ours. */
async function figure(
  loadgen: LoadGenerator,
  name: string,
  start: Record<'bare' | 'ours', () => Promise<BenchServer>>,
  requests: LoadJob['requests'],
  status: number,
  goal: number,
): Promise<PairedRow> {
  const times: Record<'bare' | 'ours', ServerTime[]> = { bare: [], ours: [] };
  const bareRequests = requests.map((request) => ({
    ...request,
    path: '/gates',
    body: JSON.stringify({ url: '/article/1' }),
  }));
  const paired = await alternate(async () => {
    const [bare, ours] = await Promise.all([start.bare(), start.ours()]);
    try {
      await primeEach(bare, bareRequests, 402);
      await primeEach(ours, requests, status);
      await round(loadgen, bare, bareRequests, 402, WARM_UP_SECONDS, CONNECTIONS);
      await round(loadgen, ours, requests, status, WARM_UP_SECONDS, CONNECTIONS);
      const baseline = await round(loadgen, bare, bareRequests, 402, ROUND_SECONDS, CONNECTIONS);
      const measured = await round(loadgen, ours, requests, status, ROUND_SECONDS, CONNECTIONS);
      times.bare.push(baseline.server);
      times.ours.push(measured.server);
      return { baseline: baseline.rate, ours: measured.rate };
    } finally {
      await Promise.all([bare.close(), ours.close()]);
    }
  });
  const server = { baseline: medianTime(times.bare), ours: medianTime(times.ours) };
  return {
    figure: name,
    baselineName: 'bare Fastify + pg INSERT',
    paired,
    server: Number.isNaN(server.ours.busy) ? undefined : server,
    goal,
  };
}
