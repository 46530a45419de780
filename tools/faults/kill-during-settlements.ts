import { DEV_ROLES, deployTestUsdc, startAnvil } from '@crawlgate/devchain';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PrivateKeyAccount } from 'viem';
import { createChainContext } from '../../apps/api/src/chain/chain-context';
import { loadConfig } from '../../apps/api/src/config/config';
import { openDatabase } from '../../apps/api/src/db/database';
import { openGate, pricedSite, type TestSite } from '../../apps/api/test/fixtures';
import { httpCaller } from '../../apps/api/test/http-call';
import { fundUsdc, newWallet, signPayment, usdcBalance } from '../../apps/api/test/test-agent';
import { apiProcess, type ApiProcess } from './api-process';
import { auditSettlements, type Attempt } from './settlement-audit';

/*
 * `npm run faults:kill`: SIGKILLs the API at random moments while agents settle 200 payments, then
 * checks the chain against the database: every transfer is exactly one paid gate, no gate is paid
 * without a transfer, nobody is charged twice. Exits non-zero on any violation.
 */

const SETTLEMENTS = 200;
const WORKERS = 4;
const AGENTS = 8;
/** Gates are limited to 200 a minute per site token: spread them. */
const SITES = 4;
/** A restart takes about 4 s (PGlite, migrations check, Nest): the API is up about 40% of the drive. */
const KILL_EVERY_MS = [1_000, 4_000] as const;
/** Bounds the settlements, then the whole run, so it always stops by itself. */
const DRIVE_LIMIT_MS = 200_000;
const RUN_LIMIT_MS = 320_000;
const SETTLEMENT_TIMEOUT_MS = 5_000;
const RECONCILE_INTERVAL_MS = 500;
/** One proof is retried this long at most, so a stuck one is reported rather than stalling its worker. */
const SETTLEMENT_LIMIT_MS = 30_000;
/** pricedSite's default price, 0.01 USD, in atomic USDC. */
const PRICE = 10_000n;
const ROOT = join(__dirname, '..', '..');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const between = ([min, max]: readonly [number, number]) => min + Math.random() * (max - min);

async function main(): Promise<number> {
  const started = Date.now();
  const work = mkdtempSync(join(tmpdir(), 'crawlgate-kill-'));
  let keepWork = false;
  const cleanups: (() => Promise<unknown> | void)[] = [];
  try {
    const entry = buildApi(cleanups);
    const anvil = await startAnvil();
    cleanups.unshift(() => anvil.stop());
    const { usdc } = await deployTestUsdc({ rpcUrl: anvil.rpcUrl });
    const chain = createChainContext({
      config: loadConfig({}).chain,
      rpcUrl: anvil.rpcUrl,
      relayerPrivateKey: DEV_ROLES.relayer.privateKey,
      usdc,
    });

    const dataDir = join(work, 'data');
    const api = apiProcess({
      main: entry,
      cwd: ROOT,
      port: await freePort(),
      logFile: join(work, 'api.log'),
      env: {
        CRAWLGATE_DATA_DIR: dataDir,
        DATABASE_URL: '',
        REDIS_URL: '',
        CRAWLGATE_NETWORK: 'local',
        RPC_URL: anvil.rpcUrl,
        USDC_ADDRESS: usdc,
        TRUST_PROXY: '1',
        LOG_LEVEL: 'warn',
        SETTLEMENT_TIMEOUT_MS: String(SETTLEMENT_TIMEOUT_MS),
        RECONCILE_INTERVAL_MS: String(RECONCILE_INTERVAL_MS),
      },
    });
    cleanups.unshift(() => api.stop());
    await api.start();

    const client = { call: httpCaller(api.url), chain };
    // Its key signs each publisher's proof: every site's publisher names this one address.
    const payee = newWallet();
    const payTo = payee.address;
    const sites: TestSite[] = [];
    for (let i = 0; i < SITES; i++) sites.push((await pricedSite(client, payee)).site);
    const agents = Array.from({ length: AGENTS }, () => newWallet());
    const balancesBefore = new Map<`0x${string}`, bigint>();
    for (const agent of agents) {
      await fundUsdc(client, agent.address, '1');
      balancesBefore.set(agent.address, await usdcBalance(client, agent.address));
    }

    const killer = killLoop(api);
    const deadline = Date.now() + DRIVE_LIMIT_MS;
    const over = () => Date.now() > deadline || killer.failed;
    const answers = new Map<string, number>();
    const jobs = Array.from({ length: SETTLEMENTS }, (_, i) => ({
      i,
      site: sites[i % SITES],
      agent: agents[i % AGENTS],
    }));
    const attempts: Attempt[] = [];
    const proofs = new Map<string, Proof>();
    await Promise.all(
      Array.from({ length: WORKERS }, async () => {
        for (let job = jobs.shift(); job && !over(); job = jobs.shift()) {
          const proof = await openAndSign(client, job.site, job.agent, `/article/${job.i}`, over);
          if (!proof) continue;
          proofs.set(proof.attempt.gateId, proof);
          attempts.push(await askUntilPaid(client, proof, Date.now() + SETTLEMENT_LIMIT_MS, over, answers));
        }
      }),
    );
    const { kills, meanRestartMs } = await killer.stop();

    // The kills are over: an agent whose answer a kill (or the deadline) cut off asks again with
    // the same proof, as a real one would, and must now be told 200.
    const collectBy = Date.now() + SETTLEMENT_LIMIT_MS;
    for (const [index, attempt] of attempts.entries()) {
      if (!attempt.txHash)
        attempts[index] = await askUntilPaid(client, proofs.get(attempt.gateId)!, collectBy, () => false, answers);
    }

    // Let the reconciler finish anything still open, then read the data the API left.
    await sleep(SETTLEMENT_TIMEOUT_MS + 2 * RECONCILE_INTERVAL_MS);
    await api.stop();
    const db = await openDatabase({ dataDir });
    const report = await auditSettlements({
      chain,
      db,
      siteIds: sites.map((s) => s.siteId),
      payTo,
      amount: PRICE,
      balancesBefore,
      attempts,
    }).finally(() => db.close());

    const settled = attempts.filter((a) => a.txHash).length;
    const seconds = ((Date.now() - started) / 1000).toFixed(0);
    console.log(
      `answers seen: ${[...answers].map(([key, n]) => `${key}×${n}`).join(', ')}; a restart took ${(meanRestartMs / 1000).toFixed(1)} s on average`,
    );
    for (const [kind, problems] of Object.entries(report))
      for (const problem of problems.values()) console.log(`${kind}: ${problem}`);
    console.log(
      `kill-during-settlements: ${settled} settlements, ${kills} kills, ${report.lost.size} lost, ${report.doubled.size} doubled, ${report.phantom.size} phantom (${seconds} s)`,
    );
    const failed = settled !== SETTLEMENTS || report.lost.size + report.doubled.size + report.phantom.size > 0;
    keepWork = failed;
    if (failed) console.log(`kept for a look: ${work} (api.log, data/)`);
    return failed ? 1 : 0;
  } catch (error) {
    keepWork = true;
    console.error(`kept for a look: ${work} (api.log, data/)`);
    throw error;
  } finally {
    for (const cleanup of cleanups) await cleanup();
    if (!keepWork) rmSync(work, { recursive: true, force: true });
  }
}

/** Builds the API, and runs a private copy so a concurrent build cannot swap it between restarts. */
function buildApi(cleanups: (() => unknown)[]): string {
  const build = spawnSync(process.execPath, ['tools/build-api.mjs'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('the API build failed');
  // Under the repository, so the copy still finds node_modules and prisma/migrations above it.
  const dir = join(ROOT, 'dist', 'faults', `api-${process.pid}`);
  cpSync(join(ROOT, 'dist', 'apps', 'api'), dir, { recursive: true });
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'main.js');
}

/** SIGKILLs the API 1–4 s after each start, and starts it again, until stopped or a restart fails. */
function killLoop(api: ApiProcess) {
  let running = true;
  let failure: Error | undefined;
  const restartsMs: number[] = [];
  const loop = (async () => {
    while (running) {
      await sleep(between(KILL_EVERY_MS));
      if (!running) break;
      const killed = Date.now();
      await api.kill();
      await api.start();
      restartsMs.push(Date.now() - killed);
    }
  })().catch((error: Error) => {
    failure = new Error(`the API did not come back after kill ${restartsMs.length + 1}: ${error.message}`);
  });
  return {
    get failed() {
      return failure !== undefined;
    },
    /** Ends the loop with the API up; throws if a restart failed. */
    async stop(): Promise<{ kills: number; meanRestartMs: number }> {
      running = false;
      await loop;
      if (failure) throw failure;
      return {
        kills: restartsMs.length,
        meanRestartMs: restartsMs.reduce((a, b) => a + b, 0) / Math.max(1, restartsMs.length),
      };
    },
  };
}

type Client = Parameters<typeof openGate>[0] & Parameters<typeof signPayment>[0];

/** A gate and the one proof an agent signed for it. */
interface Proof {
  attempt: Attempt;
  payment: Awaited<ReturnType<typeof signPayment>>;
}

/** Opens the gate (across restarts) and signs once. Undefined: no gate before the run was over. */
async function openAndSign(
  client: Client,
  site: TestSite,
  agent: PrivateKeyAccount,
  url: string,
  over: () => boolean,
): Promise<Proof | undefined> {
  let gate: Awaited<ReturnType<typeof openGate>> | undefined;
  while (!gate && !over()) gate = await openGate(client, site, url).catch(() => sleep(100).then(() => undefined));
  if (!gate) return undefined;
  if (BigInt(gate.amount) !== PRICE) throw new Error(`gate ${gate.id} asks ${gate.amount}, not ${PRICE}`);
  const payment = await signPayment(client, agent, gate);
  return {
    attempt: { gateId: gate.id, payer: agent.address, nonce: payment.payload.authorization.nonce as `0x${string}` },
    payment,
  };
}

/**
 * Posts the SAME proof until it answers 200 (a repeated proof never pays twice), until `giveUp`
 * or `over()`; the attempt comes back with the tx hash of its 200, or without one.
 */
async function askUntilPaid(
  client: Client,
  { attempt, payment }: Proof,
  giveUp: number,
  over: () => boolean,
  answers: Map<string, number>,
): Promise<Attempt> {
  const seen = (key: string) => answers.set(key, (answers.get(key) ?? 0) + 1);
  let told = false;
  while (Date.now() < giveUp && !over()) {
    const answer = await client
      .call('POST', `/v1/gates/${attempt.gateId}/verify`, { body: { payment } })
      .catch((error: Error) => {
        // Refused: the API was down before we asked. Anything else: it died while answering us.
        seen(
          (error.cause as { code?: string })?.code === 'ECONNREFUSED'
            ? 'verify refused (API down)'
            : 'verify cut mid-request (API killed)',
        );
        return undefined;
      });
    if (answer) seen(`verify ${answer.status}`);
    if (answer?.status === 200) return { ...attempt, txHash: answer.body.tx_hash as string };
    if (answer && ![202, 429, 503].includes(answer.status) && !told) {
      told = true;
      console.log(
        `unexpected answer for gate ${attempt.gateId} (retrying): ${answer.status} ${JSON.stringify(answer.body)}`,
      );
    }
    await sleep(answer?.status === 429 ? 1_000 : 150);
  }
  return attempt;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

// However the run goes, it ends: the guard kills the API and anvil when this process exits.
setTimeout(() => {
  console.error(`kill-during-settlements: no result within ${RUN_LIMIT_MS / 1000} s`);
  process.exit(1);
}, RUN_LIMIT_MS).unref();

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`kill-during-settlements failed: ${error instanceof Error ? error.stack : error}`);
    process.exit(1);
  },
);
