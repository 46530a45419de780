import { signAccessToken } from '@crawlgate/core';
import type { CrawlgateOptions } from '@crawlgate/middleware';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchPublisher, benchSite, startBenchApi } from './bench-api';
import { EMPTY_MIDDLEWARE, FRAMEWORKS, type Framework, type Gate } from './bench-servers';
import { startChild } from './child';
import { pairedGoals, type BenchResult } from './goals';
import { profileClock, selfTimeList, summarizeProfile } from './cpu-profile';
import { startLoadGenerator, type LoadGenerator } from './load-generator';
import { format } from './measure';
import type { LoadJob } from './load-worker';
import { alternate, pairedTable, PAIRS, ROUND_SECONDS, verdictOf, type PairedRow, type ServerTime } from './paired';
import { pinning, SERVER_CPU } from './pinning';
import { medianTime, round, type BenchServer } from './rounds';

const CONNECTIONS = 32;
const WARM_UP_SECONDS = 2;
const PROFILE_SECONDS = 10;
/** How busy a bare server must be for a ratio against it to count as met. */
const SATURATED_BUSY = 0.9;
/** The gate's own code in a profile: what it costs beside the framework's and the kernel's work. */
const GATE_CODE = { files: 'the gate (libs/middleware, libs/core)', url: /\/libs\/(?:middleware|core)\/src\// };
const PATH = '/article/42';
const BROWSER =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)';

interface Visitor {
  name: string;
  headers: Record<string, string>;
  /** What the gated route answers (the bare route answers everyone 200). */
  status: number;
  goals: Partial<Record<Framework, number>>;
}

const requestsOf = (visitor: Visitor): LoadJob['requests'] => [{ method: 'GET', path: PATH, headers: visitor.headers }];

/** Issue 13's three visitors, with their goals; the token is the site's own, for this path. */
function visitorsOf(site: { id: string; secret: string; kid: string }): Visitor[] {
  const now = Math.floor(Date.now() / 1000);
  const token = signAccessToken(
    { gate_id: randomUUID(), site_id: site.id, url: PATH, kid: site.kid, iat: now, exp: now + 3600 },
    site.secret,
  );
  return [
    {
      name: 'person (browser User-Agent)',
      headers: { 'user-agent': BROWSER },
      status: 200,
      goals: { Express: 0.97, Fastify: 0.97, Hono: 0.97 },
    },
    {
      name: 'bot with a valid access token',
      headers: { 'user-agent': GPTBOT, 'x-crawlgate-token': token },
      status: 200,
      goals: { Express: 0.95, Fastify: 0.85, Hono: 0.85 },
    },
    {
      name: 'unpaid bot, answered 402 (gate minted locally)',
      headers: { 'user-agent': GPTBOT },
      status: 402,
      goals: { Fastify: 0.8 },
    },
  ];
}

/**
 * What the gate costs each kind of visitor, on Express, Fastify and Hono (@hono/node-server):
 * the same route bare and gated, each server a process of its own, loaded by autocannon in
 * another process. The gate runs against a real Crawlgate API (PostgreSQL, local chain) started
 * here: it loads the site's terms once, then answers with no API call per request.
 */
export async function middlewareBench(): Promise<BenchResult> {
  const api = await startBenchApi();
  const loadgen = startLoadGenerator();
  try {
    const site = await benchSite(api, await benchPublisher(api), 'bench.example.com');
    const gate: CrawlgateOptions = {
      apiUrl: api.baseUrl,
      siteId: site.id,
      siteToken: site.token,
      secret: site.secret,
      failMode: 'closed',
    };
    const visitors = visitorsOf(site);
    const rows: (PairedRow & { visitor: number; framework: Framework })[] = [];
    for (const framework of frameworksToRun()) {
      const servers = {
        bare: () => startMiddlewareServer(framework),
        gated: () => startMiddlewareServer(framework, gate),
      };
      for (const [index, visitor] of visitors.entries())
        rows.push({ ...(await figure(loadgen, framework, visitor, servers)), visitor: index, framework });
      rows.push({ ...(await emptyMiddlewareRow(loadgen, framework, visitors[0])), visitor: 0.5, framework });
    }
    rows.sort((a, b) => a.visitor - b.visitor);
    const noiseFloor = await noiseFloorRow(loadgen, visitors[0]);
    const profiles = [];
    for (const row of rows.filter((r) => verdictOf(r) !== 'met'))
      profiles.push(await profileGated(loadgen, row.framework, visitors[row.visitor], gate));
    const report = [
      pairedTable('Middleware: the gated route ÷ the same route bare (servers in their own processes)', 'req/s', [
        ...rows,
        noiseFloor,
      ]),
      '',
      `Each server runs alone in a Node process (\`node -r @swc-node/register\`), autocannon in another; ${pinning.note}. ` +
        `${CONNECTIONS} connections, GET ${PATH}; per figure ${PAIRS} pairs, each on a fresh bare and a fresh gated server process: a ${WARM_UP_SECONDS} s warm-up of each, then a ${ROUND_SECONDS} s round of each, bare then gated. ` +
        "The gated servers load the site's terms from the Crawlgate API started for the run, then answer with no API call per request (402 counts are reported every 10 s). " +
        "Server busy: its CPU time (all threads, from /proc) over the round's length; waiting: its time runnable while other work held the CPU. " +
        'Busy near 1, the server set the pace; well under 1 with little waiting, the load generator could not keep it busy and the ratio compares against a baseline the load generator held down. ' +
        'The noise-floor row loads two identical bare servers the same way: its spread is what the machine alone does to a ratio.',
      ...(profiles.length
        ? [
            '',
            `#### Goals missed or not judged: top 5 self-time functions of the gated server (\`node --cpu-prof\`, only the samples of a ${PROFILE_SECONDS} s round of load, idle excluded)`,
            '',
            ...profiles,
          ]
        : []),
    ].join('\n');
    return { report, goals: pairedGoals(rows) };
  } finally {
    await loadgen.close();
    await api.close();
  }
}

/** `MIDDLEWARE_FRAMEWORKS=Hono,Fastify` measures only those; all three by default. */
function frameworksToRun(): Framework[] {
  const named = process.env.MIDDLEWARE_FRAMEWORKS?.split(',').map((name) => name.trim());
  if (!named) return FRAMEWORKS;
  const unknown = named.filter((name) => !FRAMEWORKS.includes(name as Framework));
  if (unknown.length)
    throw new Error(`MIDDLEWARE_FRAMEWORKS: unknown ${unknown.join(', ')} (${FRAMEWORKS.join(', ')})`);
  return named as Framework[];
}

/**
 * The framework's cheapest middleware that does nothing, against the bare route: what any gate
 * costs on that framework before it reads a header, the bound of the gate's own ratio. On Hono any
 * middleware makes the app's answer a promise (compose is async), where a lone handler's is not.
 */
async function emptyMiddlewareRow(loadgen: LoadGenerator, framework: Framework, person: Visitor): Promise<PairedRow> {
  const servers = {
    bare: () => startMiddlewareServer(framework),
    gated: () => startMiddlewareServer(framework, EMPTY_MIDDLEWARE),
  };
  const row = await figure(loadgen, framework, { ...person, goals: {} }, servers);
  return {
    ...row,
    figure: `${framework}: person, through an empty middleware instead of the gate (the framework's floor)`,
  };
}

/** Two identical bare Fastify servers measured as a figure: whatever their ratio shows is the harness and the machine. */
async function noiseFloorRow(loadgen: LoadGenerator, person: Visitor): Promise<PairedRow> {
  const bare = () => startMiddlewareServer('Fastify');
  const row = await figure(loadgen, 'Fastify', { ...person, goals: {} }, { bare, gated: bare });
  return { ...row, figure: 'noise floor: a second bare Fastify server, same request (person)' };
}

/**
 * One figure. Every pair gets two fresh server processes, each warmed up, then measured bare then
 * gated: two identical bare servers, both fully busy, were seen to differ by a fifth in speed for
 * as long as they lived; such a difference must land in the spread, not in every pair alike.
 */
async function figure(
  loadgen: LoadGenerator,
  framework: Framework,
  visitor: Visitor,
  start: Record<'bare' | 'gated', () => Promise<BenchServer>>,
): Promise<PairedRow> {
  const times: Record<'bare' | 'gated', ServerTime[]> = { bare: [], gated: [] };
  const paired = await alternate(async () => {
    const [bare, gated] = await Promise.all([start.bare(), start.gated()]);
    try {
      await round(loadgen, bare, requestsOf(visitor), 200, WARM_UP_SECONDS, CONNECTIONS);
      await round(loadgen, gated, requestsOf(visitor), visitor.status, WARM_UP_SECONDS, CONNECTIONS);
      const baseline = await round(loadgen, bare, requestsOf(visitor), 200, ROUND_SECONDS, CONNECTIONS);
      const ours = await round(loadgen, gated, requestsOf(visitor), visitor.status, ROUND_SECONDS, CONNECTIONS);
      times.bare.push(baseline.server);
      times.gated.push(ours.server);
      return { baseline: baseline.rate, ours: ours.rate };
    } finally {
      await Promise.all([bare.close(), gated.close()]);
    }
  });
  const server = { baseline: medianTime(times.bare), ours: medianTime(times.gated) };
  // The bare route is all CPU: a bare server not kept busy was held down by the load generator,
  // and a ratio against it says more for the gate than the gate allows.
  const heldDown = server.baseline.busy < SATURATED_BUSY;
  return {
    figure: `${framework}: ${visitor.name}`,
    baselineName: `${framework} route, bare`,
    paired,
    server: Number.isNaN(server.ours.busy) ? undefined : server,
    goal: visitor.goals[framework],
    unjudged: heldDown
      ? `the bare server was busy ${format(server.baseline.busy, 2)} of its rounds (under ${SATURATED_BUSY}): the load generator held it down`
      : undefined,
  };
}

async function startMiddlewareServer(framework: Framework, gate?: Gate, nodeArgs: string[] = []): Promise<BenchServer> {
  const child = startChild('middleware-server.ts', {
    cpu: SERVER_CPU,
    args: [framework],
    nodeArgs,
    env: { BENCH_GATE: gate ? JSON.stringify(gate) : '' },
  });
  const port = Number(await child.readLine());
  return { url: `http://127.0.0.1:${port}`, pid: child.pid, close: () => child.close() };
}

/** A fresh gated server run under `node --cpu-prof` with this visitor's load; its top self-time functions. */
async function profileGated(
  loadgen: LoadGenerator,
  framework: Framework,
  visitor: Visitor,
  gate: CrawlgateOptions,
): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'crawlgate-cpu-prof-'));
  const server = await startMiddlewareServer(framework, gate, ['--cpu-prof', '--cpu-prof-dir', dir]);
  let from: number;
  let to: number;
  try {
    await round(loadgen, server, requestsOf(visitor), visitor.status, WARM_UP_SECONDS, CONNECTIONS);
    from = profileClock();
    await round(loadgen, server, requestsOf(visitor), visitor.status, PROFILE_SECONDS, CONNECTIONS);
    to = profileClock();
  } finally {
    await server.close();
  }
  return [
    `${framework}, ${visitor.name} (profile in ${dir}):`,
    '',
    selfTimeList(summarizeProfile(dir, from, to, 5, GATE_CODE)),
    '',
  ].join('\n');
}
