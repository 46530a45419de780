/*
 * @crawlgate/agent on pages whose paid answer is a redirect: a real Express site gated by our
 * middleware (batch-settlement on, so exact and voucher agents pay it), the real API and the local
 * chain. The gate settles the payment and puts its settlement and the page's token on the redirect:
 * that redirect is what the payment bought.
 */

import { crawlgateExpress } from '@crawlgate/middleware/express';
import express from 'express';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fundEth, fundUsdc, newWallet, transfersTo } from '../../../apps/api/test/test-agent';
import { GPTBOT, type GatedSite } from '../middleware/support/gated-site';
import { startVoucherSite } from '../middleware/support/voucher-site';
import { createAgent, PaymentFailedError, type AgentOptions, type PaymentEvent } from '../../../libs/agent-sdk/src';

const asBot = { headers: { 'user-agent': GPTBOT } };
const SECRET_HEADERS = ['x-payment', 'payment-signature', 'x-crawlgate-token'];

/** A node:http server on loopback answering `status` and `body` to every request, which it records. */
async function recordingServer(answer: (url: string) => { status: number; headers?: Record<string, string> }) {
  const seen: { method: string; path: string; headers: IncomingHttpHeaders; body: string }[] = [];
  const server = createServer((request, response) => {
    const entry = { method: request.method!, path: request.url!, headers: request.headers, body: '' };
    seen.push(entry);
    request.setEncoding('utf8').on('data', (chunk: string) => (entry.body += chunk));
    request.on('end', () => {
      const { status, headers } = answer(request.url!);
      response.writeHead(status, headers).end(status === 200 ? 'landing' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let gated: GatedSite;
let closeGated: () => Promise<void>;
let server: Server;
let siteUrl: string;
let landing: Awaited<ReturnType<typeof recordingServer>>;

beforeAll(async () => {
  ({ site: gated, close: closeGated } = await startVoucherSite());
  landing = await recordingServer(() => ({ status: 200 }));
  const app = express();
  app.use(crawlgateExpress(gated.options()));
  // Paying visitors are sent on: within the site (to a page with a price of its own), or to another site.
  app.get('/short/:id', (request, response) => response.redirect(302, `/full/${request.params.id}`));
  app.get('/away/:id', (_, response) => response.redirect(302, `${landing.url}/landing`));
  // The site's canonical URL: the same page without its query (the gate prices and opens the path alone).
  app.get('/canon/:id', (request, response, next) =>
    request.url.includes('?') ? response.redirect(301, request.path) : next(),
  );
  app.get('/{*path}', (request, response) => void response.send(`content of ${request.path}`));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  siteUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 60_000);
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await landing.close();
  await closeGated();
}, 60_000);

async function fundedAgent(options: Partial<AgentOptions> = {}) {
  const wallet = newWallet();
  await fundUsdc(gated.app, wallet.address, '1');
  const events: PaymentEvent[] = [];
  const agent = createAgent({
    account: wallet,
    maxPriceUsd: '0.05',
    budgetUsd: '1',
    networks: [{ network: 'local', asset: gated.app.chain.usdc }],
    rpcUrl: gated.app.chain.rpcUrl,
    pollingIntervalMs: 20,
    onPayment: (event) => events.push(event),
    ...options,
  });
  return { wallet, agent, events };
}

const transfers = async () => (await transfersTo(gated.app, gated.payTo)).length;

describe('a paid answer that redirects is what the payment bought', () => {
  it('pays once for a page that redirects within the site, keeps its token, and pays the page it leads to on the next fetch', async () => {
    const { agent, events } = await fundedAgent();
    const before = await transfers();
    // One fetch, one payment: the page the paid redirect leads to asks its own price, and its 402 is returned.
    const first = await agent.fetch(`${siteUrl}/short/1`, asBot);
    expect([first.status, first.url]).toEqual([402, `${siteUrl}/full/1`]);
    expect(events).toEqual([expect.objectContaining({ url: `${siteUrl}/short/1`, mode: 'authorization' })]);
    expect(agent.spent()).toMatchObject({ usd: '0.01', payments: 1 });
    expect(await transfers()).toBe(before + 1);
    // /short/1 is read with its token; /full/1 is paid, once.
    const second = await agent.fetch(`${siteUrl}/short/1`, asBot);
    expect([second.status, await second.text()]).toEqual([200, 'content of /full/1']);
    const third = await agent.fetch(`${siteUrl}/short/1`, asBot);
    expect([third.status, await third.text()]).toEqual([200, 'content of /full/1']);
    expect(events.map((event) => event.url)).toEqual([`${siteUrl}/short/1`, `${siteUrl}/full/1`]);
    expect(agent.spent()).toMatchObject({ usd: '0.02', payments: 2 });
    expect(await transfers()).toBe(before + 2);
  });

  it('reads the page in the same fetch when its paid answer redirects to that same page (a canonical URL)', async () => {
    const { agent, events } = await fundedAgent();
    const before = await transfers();
    const page = await agent.fetch(`${siteUrl}/canon/1?ref=feed`, asBot);
    expect([page.status, await page.text()]).toEqual([200, 'content of /canon/1']);
    expect(events).toHaveLength(1);
    expect(await transfers()).toBe(before + 1);
  });

  it('keeps the token of a page whose paid answer redirects to another site, and sends it nothing', async () => {
    const { agent, events } = await fundedAgent();
    const before = await transfers();
    const seenBefore = landing.seen.length;
    for (let i = 0; i < 2; i++) {
      const page = await agent.fetch(`${siteUrl}/away/1`, asBot);
      expect([page.status, await page.text()]).toEqual([200, 'landing']);
    }
    // Its settlement was read from the redirect, which the payment was answered with.
    expect(events).toEqual([
      expect.objectContaining({ url: `${siteUrl}/away/1`, txHash: expect.stringMatching(/^0x/) }),
    ]);
    expect(await transfers()).toBe(before + 1);
    const landed = landing.seen.slice(seenBefore);
    expect(landed).toHaveLength(2);
    for (const request of landed) for (const name of SECRET_HEADERS) expect(request.headers[name]).toBeUndefined();
  });

  it('counts a voucher charged on a redirect, and pays the next page on the same channel', async () => {
    const { agent, events } = await fundedAgent({ batchSettlement: { depositUsd: '0.1' } });
    const first = await agent.fetch(`${siteUrl}/short/2`, asBot);
    expect([first.status, first.url]).toEqual([402, `${siteUrl}/full/2`]);
    expect(events).toEqual([expect.objectContaining({ url: `${siteUrl}/short/2`, mode: 'voucher' })]);
    expect(agent.channels()).toEqual([expect.objectContaining({ deposited: 100_000n, charged: 10_000n })]);
    for (let i = 0; i < 2; i++) {
      const page = await agent.fetch(`${siteUrl}/short/2`, asBot);
      expect([page.status, await page.text()]).toEqual([200, 'content of /full/2']);
    }
    expect(events.map((event) => [event.url, event.mode])).toEqual([
      [`${siteUrl}/short/2`, 'voucher'],
      [`${siteUrl}/full/2`, 'voucher'],
    ]);
    expect(agent.channels()).toEqual([expect.objectContaining({ deposited: 100_000n, charged: 20_000n })]);
  });
});

describe('a transfer proof goes to the verify_url named, nowhere else', () => {
  it('follows no redirect of the verify_url: the proof is not posted again elsewhere', async () => {
    // Stands for a host of the agent's own network, which a verify_url redirects to.
    const internal = await recordingServer(() => ({ status: 200 }));
    const hostile = await recordingServer((path) => ({ status: 307, headers: { location: `${internal.url}${path}` } }));
    // In front of the site: its 402s name the hostile verify_url, with the real gate's id.
    const proxy = createServer(async (request, response) => {
      const upstream = await fetch(`${siteUrl}${request.url}`, { headers: { 'user-agent': GPTBOT } });
      const body = await upstream.text();
      if (upstream.status !== 402) return void response.writeHead(upstream.status).end(body);
      const offer = JSON.parse(body) as { verify_url: string };
      offer.verify_url = `${hostile.url}${new URL(offer.verify_url).pathname}`;
      response.writeHead(402, { 'content-type': 'application/json' }).end(JSON.stringify(offer));
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const { agent, wallet } = await fundedAgent({ payMode: 'transfer' });
      await fundEth(gated.app, wallet.address);
      const proxied = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const attempt = agent.fetch(`${proxied}/article/verify-redirect`, asBot);
      await expect(attempt).rejects.toBeInstanceOf(PaymentFailedError);
      await expect(attempt).rejects.toMatchObject({ reason: 'verify_307' });
      expect(hostile.seen.map((request) => request.method)).toEqual(['POST']);
      expect(internal.seen).toEqual([]);
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
      await hostile.close();
      await internal.close();
    }
  });
});
