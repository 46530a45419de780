import {
  exactAuthorization,
  exactPaymentV1,
  MAX_AUTHORIZATION_SECONDS,
  signAccessToken,
  transferWithAuthorizationTypedData,
  type GateOffer,
  type PaidGate,
  USDC_ABI,
} from '@crawlgate/core';
import { DEV_ROLES } from '@crawlgate/devchain';
import type { CrawlgateOptions } from '@crawlgate/middleware';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, http, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { benchPublisher, benchSite, startBenchApiProcess, startBenchStack, type BenchApi } from './bench-api';
import { startChild } from './child';
import type { LoadResult } from './load';
import { startLoadGenerator } from './load-generator';
import { cpuTimes } from './process-cpu';
import { profileClock, selfTimeList, summarizeProfile } from './cpu-profile';
import type { BenchResult, Goal } from './goals';
import { format } from './measure';

/**
 * Per second, issue 13's crawler scale: unpaid bots through the middleware, token checks and payments
 * at the API. LOAD_RATES (JSON, e.g. {"unpaidBot":0}) overrides some, to look at one kind alone.
 */
const RATES: Record<'unpaidBot' | 'tokenCheck' | 'payment', number> = {
  unpaidBot: 1000,
  tokenCheck: 200,
  payment: 50,
  ...JSON.parse(process.env.LOAD_RATES ?? '{}'),
};
// 100 token checks and 200 gates a minute per site token: 150 sites carry 12,000 checks and 3,000 gates a minute.
const SITES = 150;
const AGENTS = 16;
const P99_GOAL_MS = 50;
const SETTLEMENTS_GOAL = 50;
const MEMORY_GOAL_BYTES = 250e6;
const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)';

interface Outcome {
  ms: number;
  status: number;
}

/**
 * A fixed-rate mix for LOAD_SECONDS (default 60), open loop: unpaid GPTBot requests through a
 * Fastify server gated by our middleware (paced, from a load generator in its own process), access-token checks and
 * full payments (gate → EIP-3009 signature → verify, settled on chain) against the API in its own
 * process on PostgreSQL and the local chain. Fails on any 5xx, any page served to an unpaid bot, any
 * payment lost or doubled between the API's answers and the chain's Transfer events. Reports p50/p99
 * per operation, settlements per second and the API's peak resident memory.
 */
export async function loadTest(): Promise<BenchResult> {
  const seconds = Number(process.env.LOAD_SECONDS ?? 60);
  // LOAD_PROFILE=1: the API runs under `node --cpu-prof`, and the report adds its top self-time functions.
  const profileDir = process.env.LOAD_PROFILE === '1' ? mkdtempSync(join(tmpdir(), 'crawlgate-load-prof-')) : undefined;
  const stack = await startBenchStack();
  // Nothing of this test is pinned: it runs seven processes on the machine's cores (API, gated server,
  // load generator, this driver, PostgreSQL, the chain), and two servers pinned to one core would
  // queue behind each other while the other core idles.
  const api = await startBenchApiProcess(stack, {
    nodeArgs: profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [],
    pinned: false,
  });
  let profileWindow: { from: number; to: number } | undefined;
  const loadgen = startLoadGenerator({ pinned: false });
  let site: { close(): Promise<void> } | undefined;
  try {
    const sites = await createSites(api);
    const agents = await fundAgents(api);
    const asset = stack.usdc;
    const chainId = await createPublicClient({ transport: http(stack.rpcUrl) }).getChainId();
    const gate: CrawlgateOptions = {
      apiUrl: api.baseUrl,
      siteId: sites[0].id,
      siteToken: sites[0].token,
      secret: sites[0].secret,
      failMode: 'closed',
    };
    const middleware = startChild('middleware-server.ts', {
      args: ['Fastify'],
      env: { BENCH_GATE: JSON.stringify(gate) },
    });
    site = middleware;
    const siteUrl = `http://127.0.0.1:${Number(await middleware.readLine())}`;

    const outcomes: Record<'tokenCheck' | 'payment', Outcome[]> = { tokenCheck: [], payment: [] };
    const paid: { tx: string; at?: number }[] = []; // at: when the 200 arrived, for those of the window
    const pending: (() => Promise<Response>)[] = [];
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(api.baseUrl + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    const timed = async (kind: keyof typeof outcomes, work: () => Promise<number>) => {
      const started = performance.now();
      const status = await work().catch(() => 599); // a failed request counts as a 5xx
      outcomes[kind].push({ ms: performance.now() - started, status });
    };
    let n = 0;
    const operations: Record<keyof typeof outcomes, () => Promise<number>> = {
      tokenCheck: async () => {
        const site = sites[n++ % SITES];
        const now = Math.floor(Date.now() / 1000);
        const token = signAccessToken(
          { gate_id: site.id, site_id: site.id, url: '/a', kid: site.kid, iat: now, exp: now + 600 },
          site.secret,
        );
        return (await post('/v1/access-tokens/verify', { token, url: '/a' }, { 'x-site-token': site.token })).status;
      },
      payment: async () => {
        const index = n++;
        const gateResponse = await post(
          '/v1/gates',
          { url: `/paid/${index}` },
          { 'x-site-token': sites[index % SITES].token },
        );
        if (gateResponse.status !== 402) return gateResponse.status; // no gate offered: its status is the outcome
        const offer = (await gateResponse.json()) as GateOffer;
        const payment = await signPayment(agents[index % AGENTS], offer, { asset, chainId });
        const verify = () => post(`/v1/gates/${encodeURIComponent(offer.id)}/verify`, { payment });
        const response = await verify();
        if (response.status === 200)
          paid.push({ tx: ((await response.json()) as PaidGate).tx_hash, at: performance.now() });
        else if (response.status === 202) pending.push(verify); // settling: asked again after the run
        return response.status;
      },
    };

    let peakRss = 0;
    const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, residentBytes(api.pid!))), 250);
    const noBots: LoadResult = {
      name: 'unpaid bots',
      requestsPerSecond: 0,
      p50Ms: 0,
      p99Ms: 0,
      statuses: {},
      errors: 0,
    };
    const bots =
      RATES.unpaidBot <= 0
        ? Promise.resolve(noBots)
        : loadgen.run({
            name: 'unpaid bots',
            url: siteUrl,
            requests: Array.from({ length: 100 }, (_, i) => ({
              method: 'GET',
              path: `/article/${i}`,
              headers: { 'user-agent': GPTBOT },
            })),
            seconds,
            connections: 64,
            rate: RATES.unpaidBot,
          });
    const inflight: Promise<void>[] = [];
    const loadStarted = profileClock();
    const apiCpuBefore = cpuTimes(api.pid!);
    const timers = (Object.keys(outcomes) as (keyof typeof outcomes)[])
      .filter((kind) => RATES[kind] > 0)
      .map((kind) => openLoop(RATES[kind], () => inflight.push(timed(kind, operations[kind]))));
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    timers.forEach(clearInterval);
    const windowEnd = performance.now();
    profileWindow = { from: loadStarted, to: profileClock() };
    const apiCpuAfter = cpuTimes(api.pid!);
    const botResult = await bots;
    await Promise.all(inflight);
    clearInterval(rssTimer);
    // Settled within the window: answered 200 before it ended, not merely started in it.
    const settledInWindow = paid.filter(({ at }) => at !== undefined && at <= windowEnd).length;
    for (const verify of pending) paid.push(...(await settleLater(verify)));

    const client = createPublicClient({ transport: http(stack.rpcUrl) });
    const transfers = await client.getContractEvents({
      address: asset,
      abi: USDC_ABI,
      eventName: 'Transfer',
      args: { to: DEV_ROLES.publisher.address },
      fromBlock: 0n,
    });
    const onChain = new Set(transfers.map((log) => log.transactionHash.toLowerCase()));
    const answered = new Set(paid.map(({ tx }) => tx.toLowerCase()));
    const lost = [...onChain].filter((hash) => !answered.has(hash)).length;
    const doubled = paid.length - answered.size + [...answered].filter((hash) => !onChain.has(hash)).length;
    const servedUnpaid = Object.entries(botResult.statuses)
      .filter(([status]) => Number(status) < 300)
      .reduce((sum, [, count]) => sum + count, 0);
    const serverErrors =
      Object.values(outcomes)
        .flat()
        .filter((o) => o.status >= 500).length +
      Object.entries(botResult.statuses)
        .filter(([status]) => Number(status) >= 500)
        .reduce((sum, [, count]) => sum + count, 0) +
      botResult.errors;

    const botTotal = Object.values(botResult.statuses).reduce((a, b) => a + b, 0);
    const perOperation = [
      {
        name: 'unpaid bot through the middleware (402)',
        rate: RATES.unpaidBot,
        requests: botTotal,
        p50: botResult.p50Ms,
        p99: botResult.p99Ms,
        statuses: botResult.statuses,
        p99Goal: true,
      },
      ...(Object.keys(outcomes) as (keyof typeof outcomes)[]).map((kind) => {
        const list = outcomes[kind];
        const sorted = list.map((o) => o.ms).sort((a, b) => a - b);
        return {
          name: kind === 'tokenCheck' ? 'POST /v1/access-tokens/verify' : 'payment (gate, sign, verify and settle)',
          rate: RATES[kind],
          requests: list.length,
          p50: sorted[Math.floor(sorted.length / 2)] ?? 0,
          p99: sorted[Math.floor(sorted.length * 0.99)] ?? 0,
          statuses: list.reduce<Record<string, number>>(
            (acc, o) => ({ ...acc, [o.status]: (acc[o.status] ?? 0) + 1 }),
            {},
          ),
          p99Goal: kind !== 'payment', // the p99 goal covers everything but payments
        };
      }),
    ];
    const rows = perOperation.map(
      (op) =>
        `| ${op.name} | ${op.rate}/s | ${op.requests} | ${format(op.p50, 1)} | ${format(op.p99, 1)} | ${statusList(op.statuses)} | ${op.p99Goal ? (op.p99 < P99_GOAL_MS ? 'met' : '**missed**') : '—'} |`,
    );
    const settledPerSecond = settledInWindow / seconds;
    // Offered at a fixed rate, settlements can never outnumber the offer within the window: the API
    // sustains the rate when it keeps up, every payment settled and less than a second's worth still
    // settling when the window closed (a backlog that grew would leave more).
    const offered = outcomes.payment.length;
    const backlog = offered - settledInWindow;
    const lastAnswer = paid.reduce((latest, { at }) => (at !== undefined && at > latest ? at : latest), windowEnd);
    const keptUp = RATES.payment >= SETTLEMENTS_GOAL && paid.length === offered && backlog <= RATES.payment;
    const goals: Goal[] = [
      ...perOperation
        .filter((op) => op.p99Goal)
        .map((op) => ({
          figure: `load test: p99 of ${op.name} at ${op.rate}/s`,
          reached: `${format(op.p99, 1)} ms`,
          goal: `< ${P99_GOAL_MS} ms`,
          met: op.p99 < P99_GOAL_MS,
        })),
      {
        figure: `load test: settlements per second from one API instance, sustained for ${seconds} s, 0 lost, 0 doubled`,
        reached: `${format(settledPerSecond, 1)}/s: ${settledInWindow} of ${offered} offered at ${RATES.payment}/s settled within the window, the last ${format((lastAnswer - windowEnd) / 1000, 1)} s after it`,
        goal: `≥ ${SETTLEMENTS_GOAL}/s: keeps up (every one settled, under 1 s of them left when the window closed)`,
        met: keptUp,
      },
      {
        figure: `load test: API peak resident memory, the mix above (its ${RATES.tokenCheck + RATES.payment} API calls a second beside ${RATES.unpaidBot} unpaid bots the middleware answers)`,
        reached: `${format(peakRss / 1024 / 1024)} MiB`,
        goal: `≤ 250 MB (${format(MEMORY_GOAL_BYTES / 1024 / 1024)} MiB)`,
        met: peakRss <= MEMORY_GOAL_BYTES,
      },
    ];
    const report = [
      `### Load test at crawler scale: ${seconds} s at fixed rates (API and gated Fastify server in their own processes, PostgreSQL, local chain)`,
      '',
      `| operation | rate | requests | p50 ms | p99 ms | statuses | p99 < ${P99_GOAL_MS} ms |`,
      '|---|---:|---:|---:|---:|---|---|',
      ...rows,
      '',
      `5xx and connection errors: **${serverErrors}**. Pages served to an unpaid bot: **${servedUnpaid}**. ` +
        `Payments answered 200: ${paid.length} (${settledInWindow} within the window, the rest after it); transfers on chain: ${onChain.size}; lost: **${lost}**; doubled: **${doubled}**. ` +
        `Settlements per second within the window: **${format(settledPerSecond, 1)}** (goal ≥ ${SETTLEMENTS_GOAL}). API peak resident memory: **${format(peakRss / 1024 / 1024)} MiB** (goal ≤ 250 MB, ${format(MEMORY_GOAL_BYTES / 1024 / 1024)} MiB). ` +
        `The API ran on a CPU ${format(apiCpuAfter.running - apiCpuBefore.running, 1)} s of the ${seconds} s and waited for one ${format(apiCpuAfter.waiting - apiCpuBefore.waiting, 1)} s (other processes held it).`,
    ].join('\n');
    if (serverErrors > 0 || servedUnpaid > 0 || lost > 0 || doubled > 0)
      throw new Error(`load test failed:\n${report}`);
    return { report, goals };
  } finally {
    await site?.close();
    await loadgen.close();
    await api.close(); // writes the profile
    await stack.close();
    if (profileDir && profileWindow)
      console.log(
        `API profile of the load (${profileDir}, samples ${profileWindow.from}–${profileWindow.to} µs):\n\n${selfTimeList(summarizeProfile(profileDir, profileWindow.from, profileWindow.to, 15))}\n`,
      );
  }
}

/**
 * Calls `start` `rate` times a second from now on, whatever the event loop's delays: each tick starts
 * every call due by then, so a late timer (the machine is busy) does not lower the rate offered.
 */
function openLoop(rate: number, start: () => void): ReturnType<typeof setInterval> {
  const began = performance.now();
  let started = 0;
  return setInterval(() => {
    const due = Math.floor(((performance.now() - began) / 1000) * rate);
    for (; started < due; started++) start();
  }, 5);
}

const statusList = (statuses: Record<string, number>) =>
  Object.entries(statuses)
    .map(([s, c]) => `${s}×${c}`)
    .join(' ');

async function createSites(api: BenchApi) {
  const sites: Awaited<ReturnType<typeof benchSite>>[] = [];
  let publisher = await benchPublisher(api);
  for (let i = 0; i < SITES; i++) {
    if (i > 0 && i % 45 === 0) publisher = await benchPublisher(api); // 100 calls a minute per publisher
    sites.push(await benchSite(api, publisher, `load-${i}.example.com`));
  }
  return sites;
}

async function fundAgents(api: BenchApi): Promise<PrivateKeyAccount[]> {
  const agents: PrivateKeyAccount[] = [];
  for (let i = 0; i < AGENTS; i++) {
    const account = privateKeyToAccount(generatePrivateKey());
    await api.call('POST', '/v1/dev/faucet', { address: account.address, amount_usd: '50' });
    agents.push(account);
  }
  return agents;
}

/** A payment answered 202 (settling), asked again until it is final: its transfer, if paid. */
async function settleLater(verify: () => Promise<Response>): Promise<{ tx: string }[]> {
  for (let attempt = 0; attempt < 120; attempt++) {
    const response = await verify();
    if (response.status === 200) return [{ tx: ((await response.json()) as PaidGate).tx_hash }];
    if (response.status !== 202) return [];
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error('a payment was still settling two minutes after the load test');
}

function residentBytes(pid: number): number {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:'));
    return line ? Number(line.split(/\s+/)[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

async function signPayment(account: PrivateKeyAccount, gate: GateOffer, chain: { asset: Address; chainId: number }) {
  const authorization = exactAuthorization({
    from: account.address,
    to: gate.pay_to as `0x${string}`,
    value: BigInt(gate.amount),
    validForSeconds: MAX_AUTHORIZATION_SECONDS,
  });
  const { name, version } = (gate.accepts[0].extra ?? {}) as { name?: string; version?: string };
  if (!name || !version) throw new Error('the gate names no EIP-712 domain for its asset');
  const signature = await account.signTypedData(
    transferWithAuthorizationTypedData(
      { name, version, chainId: chain.chainId, verifyingContract: chain.asset },
      authorization,
    ),
  );
  return exactPaymentV1(gate.accepts[0].network, authorization, signature);
}
