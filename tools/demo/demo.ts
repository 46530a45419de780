import { createAgent, BudgetExceededError, PriceTooHighError } from '@crawlgate/agent';
import { DEV_ROLES } from '@crawlgate/devchain';
import { crawlgateExpress } from '@crawlgate/middleware/express';
import { PublisherClient } from '@crawlgate/publisher';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';

/*
 * `npm run demo`: the whole story on the embedded defaults. Starts the API as `npm start` would
 * (PGlite, its own local chain), sets up a publisher and a priced site with @crawlgate/publisher,
 * gates a small Express site with @crawlgate/middleware, and lets an @crawlgate/agent crawl it.
 * `npm run demo -- --serve` then keeps the API running, so the dashboard shows the demo's data.
 */

const ROOT = join(__dirname, '..', '..');
const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)';
const AHREFS = 'Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)';
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

const SERVE = process.argv.includes('--serve');

const step = (text: string) => console.log(`\n▶ ${text}`);
const say = (text: string) => console.log(`  ${text}`);

async function main(): Promise<void> {
  const started = Date.now();
  const dataDir = mkdtempSync(join(tmpdir(), 'crawlgate-demo-'));
  const cleanups: (() => Promise<void> | void)[] = [() => rmSync(dataDir, { recursive: true, force: true })];
  try {
    if (SERVE) buildDashboard();
    step('Starting the Crawlgate API on the embedded defaults (PGlite, local chain)');
    // Served for a person to open: the usual port (or PORT); otherwise any free one.
    const apiPort = SERVE ? Number(process.env.PORT || 3000) : await freePort();
    const api = spawnApi(apiPort, dataDir);
    cleanups.unshift(() => stop(api));
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    await waitForHealth(apiUrl, api);
    say(`API ready at ${apiUrl}/v1 (docs at ${apiUrl}/docs)`);

    step('A publisher registers, sets a payout address, creates a site and prices it');
    const password = 'demo password 123';
    const publisher = new PublisherClient({ apiUrl });
    await publisher.register({ email: 'editor@demo.example', password, name: 'Demo News' });
    await publisher.updateMe({ payout_address: DEV_ROLES.publisher.address }, { password });
    const site = await publisher.createSite({ domain: 'demo.example', name: 'Demo News' });
    await publisher.setPricing(site.site_id, {
      default_price_usd: '0.002',
      rules: [
        { path: '/free/*', price_usd: '0' },
        { path: '/news/*', price_usd: '0.001' },
        { path: '/reports/*', price_usd: '0.05' },
      ],
    });
    say('pricing: /free/* free · /news/* 0.001 USD · /reports/* 0.05 USD · everything else 0.002 USD');
    say('policy: AI crawlers pay, search engines pass, SEO crawlers are blocked');

    step('The publisher’s site goes live behind @crawlgate/middleware (Express)');
    const app = express();
    const gate = crawlgateExpress({
      apiUrl,
      siteId: site.site_id,
      siteToken: site.site_token,
      secret: site.access_token_secret,
      policy: { categories: { seo: 'block' } },
    });
    cleanups.unshift(() => gate.close());
    app.use(gate);
    app.get('/{*path}', (request, response) => void response.type('text/plain').send(`Demo News: ${request.path}`));
    const sitePort = await freePort();
    const server = await listen(app, sitePort);
    cleanups.unshift(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const siteUrl = `http://127.0.0.1:${sitePort}`;
    say(`site at ${siteUrl}`);

    step('A person reads a paid article: no gate for browsers');
    const human = await fetch(`${siteUrl}/news/launch`, { headers: { 'user-agent': BROWSER } });
    say(`${human.status} ${await human.text()}`);

    step('An SEO crawler tries the site');
    const seo = await fetch(`${siteUrl}/news/launch`, { headers: { 'user-agent': AHREFS } });
    say(`${seo.status} blocked: ${((await seo.json()) as { detail: string }).detail}`);

    step('An AI crawler without a wallet gets 402 Payment Required');
    const unpaid = await fetch(`${siteUrl}/news/launch`, { headers: { 'user-agent': GPTBOT } });
    say(
      `${unpaid.status}, crawler-price: ${unpaid.headers.get('crawler-price')}, x402 offer on ${((await unpaid.json()) as { accepts: { network: string }[] }).accepts[0].network}`,
    );

    step('An agent gets test USDC from the faucet and a budget of 0.005 USD (at most 0.01 a page)');
    const wallet = DEV_ROLES.agents[0].account;
    await fetch(`${apiUrl}/v1/dev/faucet`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ address: wallet.address, amount_usd: '1' }),
    });
    // Agents pay only in assets they allow: here the local chain's test USDC, as the site's terms name it.
    const { asset } = (await (
      await fetch(`${apiUrl}/v1/site`, { headers: { 'x-site-token': site.site_token } })
    ).json()) as { asset: `0x${string}` };
    const agent = createAgent({
      account: wallet,
      networks: [{ network: 'local', asset }],
      maxPriceUsd: '0.01',
      budgetUsd: '0.005',
      apiUrl,
      onPayment: (payment) =>
        say(`paid ${payment.priceUsd} USD for ${new URL(payment.url).pathname}, tx ${payment.txHash}`),
    });
    const asBot = { headers: { 'user-agent': GPTBOT } };

    step('The agent reads a free page');
    say(`${(await agent.fetch(`${siteUrl}/free/about`, asBot)).status} (spent ${agent.spent().usd} USD)`);

    step('The agent reads the article: 402 → signs an EIP-3009 authorization → settled on chain → content');
    const paid = await agent.fetch(`${siteUrl}/news/launch`, asBot);
    say(`${paid.status} ${await paid.text()}`);

    step('The agent reads it again: the access token is reused, nothing is paid');
    const again = await agent.fetch(`${siteUrl}/news/launch`, asBot);
    say(`${again.status} (payments so far: ${agent.spent().payments}, spent ${agent.spent().usd} USD)`);

    step('An expensive report is above the agent’s maximum price');
    await expectRefusal(() => agent.fetch(`${siteUrl}/reports/q3`, asBot), PriceTooHighError);

    step('The agent keeps crawling until its budget runs out');
    for (let i = 1; ; i++) {
      try {
        const response = await agent.fetch(`${siteUrl}/news/story-${i}`, asBot);
        say(`/news/story-${i}: ${response.status}`);
      } catch (error) {
        if (!(error instanceof BudgetExceededError)) throw error;
        say(`refused: ${error.message}`);
        break;
      }
    }

    step('What the agent and the publisher see');
    const profile = (await agent.profile()) as { payments_count: number; total_spent_usd: string };
    say(`agent ${wallet.address}: ${profile.payments_count} payments, ${profile.total_spent_usd} USD`);
    // The gate reports the 402s it answered every 10 s; report the rest now, as it does on shutdown.
    await gate.close();
    const stats = await publisher.siteStats(site.site_id);
    say(
      `site: revenue ${stats.revenue_usd} USD, ${stats.paid_gates} paid gates of ${stats.gates_created} created (conversion ${stats.conversion})`,
    );
    if (profile.payments_count !== agent.spent().payments || stats.revenue_usd !== agent.spent().usd) {
      throw new Error(
        `books disagree: agent spent ${agent.spent().usd} USD in ${agent.spent().payments} payments; API says ${profile.total_spent_usd} / ${stats.revenue_usd}`,
      );
    }

    console.log(`\n✔ Demo finished in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    if (SERVE) {
      step('The API keeps running with the demo’s data (Ctrl-C stops it and deletes the data)');
      say(`dashboard: ${apiUrl}/dashboard/  sign in as editor@demo.example, password "${password}"`);
      await untilInterrupted();
    }
  } finally {
    for (const cleanup of cleanups) await cleanup();
  }
}

/** `npm run demo` builds only the API; the dashboard is built here when it will be looked at. */
function buildDashboard(): void {
  step('Building the dashboard (Vite)');
  execFileSync(process.execPath, [join(ROOT, 'tools/build-dashboard.mjs')], { cwd: ROOT, stdio: 'inherit' });
}

function untilInterrupted(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}

async function expectRefusal(attempt: () => Promise<unknown>, kind: new (...args: never[]) => Error): Promise<void> {
  try {
    await attempt();
  } catch (error) {
    if (error instanceof kind) return say(`refused: ${error.message}`);
    throw error;
  }
  throw new Error(`expected ${kind.name}`);
}

function spawnApi(port: number, dataDir: string): ChildProcess {
  const child = spawn(process.execPath, [join(ROOT, 'dist/apps/api/main.js')], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      CRAWLGATE_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      DATABASE_URL: '',
      REDIS_URL: '',
      CRAWLGATE_NETWORK: 'local',
      RPC_URL: '',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  return child;
}

async function waitForHealth(apiUrl: string, api: ChildProcess): Promise<void> {
  const deadline = Date.now() + 45_000;
  while (Date.now() < deadline) {
    if (api.exitCode !== null) throw new Error(`the API exited with code ${api.exitCode}`);
    const ok = await fetch(`${apiUrl}/v1/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('the API did not become healthy within 45 s');
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe: Server = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

function listen(app: ReturnType<typeof express>, port: number): Promise<import('node:http').Server> {
  return new Promise((resolve) => {
    const server = app.listen(port, '127.0.0.1', () => resolve(server));
  });
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(`\n✘ Demo failed: ${error instanceof Error ? error.stack : error}`);
    process.exit(1);
  },
);
