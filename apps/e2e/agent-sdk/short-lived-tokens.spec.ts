/*
 * An API issuing short-lived access tokens (ACCESS_TOKEN_TTL_SECONDS of a minute): once a page's
 * token has expired, the agent pays the page anew, as the gate asks, rather than send again the
 * payment that bought the expired one, which the gate can only answer with that token. The real
 * gated site (Express), API and local chain; the clock moved forward for the agent, gate and API.
 * The site's pay.json says how long its tokens last.
 */

import { MIN_ACCESS_TOKEN_TTL_SECONDS } from '@crawlgate/core';
import { devTestClient } from '@crawlgate/devchain';
import { crawlgateExpress } from '@crawlgate/middleware/express';
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fundUsdc, newWallet } from '../../../apps/api/test/test-agent';
import { startGatedSite, GPTBOT, type GatedSite } from '../middleware/support/gated-site';
import { createAgent, PaymentFailedError } from '../../../libs/agent-sdk/src';

const TTL_SECONDS = MIN_ACCESS_TOKEN_TTL_SECONDS;

let gated: GatedSite;
let server: Server;
let siteUrl: string;

beforeAll(async () => {
  // A settlement not mined in half a second is answered pending, and confirmed later by the reconciler.
  const chain = { settlementTimeoutMs: 500, reconcileIntervalMs: 200 };
  gated = await startGatedSite({ app: { isolateChain: true, config: { accessTokenTtlSeconds: TTL_SECONDS, chain } } });
  const app = express();
  app.use(crawlgateExpress(gated.options()));
  app.get('/{*path}', (request, response) => void response.send(`content of ${request.path}`));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  siteUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await gated.close();
}, 60_000);

/** How far Date.now (the agent's, the gate's and the API's: one process) runs ahead in this test. */
let ahead = 0;
const realNow = Date.now.bind(Date);
beforeEach(() => {
  ahead = 0;
  jest.spyOn(Date, 'now').mockImplementation(() => realNow() + ahead);
});
afterEach(() => jest.restoreAllMocks());

/** Moves the clock `seconds` forward from here on. */
function moveClock(seconds: number): void {
  ahead += seconds * 1000;
}

async function fetchPage(agent: ReturnType<typeof createAgent>, url: string) {
  try {
    const response = await agent.fetch(url, { headers: { 'user-agent': GPTBOT } });
    return { status: response.status, body: await response.text() };
  } catch (error) {
    if (error instanceof PaymentFailedError) return { reason: error.reason, message: error.message };
    throw error;
  }
}

/** An agent paying from a wallet of its own, through `fetch` (the global one by default). */
async function payingAgent(fetch?: typeof globalThis.fetch) {
  const wallet = newWallet();
  await fundUsdc(gated.app, wallet.address, '1');
  return createAgent({
    account: wallet,
    maxPriceUsd: '0.05',
    budgetUsd: '1',
    networks: [{ network: 'local', asset: gated.app.chain.usdc }],
    rpcUrl: gated.app.chain.rpcUrl,
    pollingIntervalMs: 20,
    fetch,
  });
}

const paymentsFor = async (path: string) =>
  (await gated.app.database.prisma.payment.findMany({ where: { url: path } })).map((payment) => payment.method);

it('a page read again after its one-minute token expired is paid anew, not refused for half an hour', async () => {
  const agent = await payingAgent();
  const url = `${siteUrl}/articles/short-lived`;
  const served = { status: 200, body: 'content of /articles/short-lived' };
  expect(await fetchPage(agent, url)).toEqual(served);
  moveClock(TTL_SECONDS / 2);
  expect(await fetchPage(agent, url)).toEqual(served); // its token still opens it
  moveClock(TTL_SECONDS / 2 + 5);
  expect(await fetchPage(agent, url)).toEqual(served);
  expect(await paymentsFor('/articles/short-lived')).toEqual(['authorization', 'authorization']);
  expect(agent.spent()).toMatchObject({ micros: 20_000n, payments: 2 });
}, 60_000);

it('a payment whose answer was lost while verify_url was unreachable, the page read again after its token expired: paid anew, not refused', async () => {
  // The paid request reaches the gate, which settles it, and its answer is lost; the posts to verify_url fail.
  let losing = true;
  const lossy: typeof fetch = async (input, init) => {
    const paid = new Headers(init?.headers).has('payment-signature');
    if (losing && init?.method === 'POST') throw new TypeError('fetch failed');
    if (losing && paid) {
      await (await fetch(input, init)).text();
      throw new TypeError('fetch failed');
    }
    return fetch(input, init);
  };
  const agent = await payingAgent(lossy);
  const url = `${siteUrl}/articles/lost-then-expired`;
  await expect(fetchPage(agent, url)).rejects.toThrow('fetch failed');
  expect(await paymentsFor('/articles/lost-then-expired')).toEqual(['authorization']);
  losing = false;
  moveClock(2 * TTL_SECONDS);
  expect(await fetchPage(agent, url)).toEqual({ status: 200, body: 'content of /articles/lost-then-expired' });
  expect(await paymentsFor('/articles/lost-then-expired')).toEqual(['authorization', 'authorization']);
}, 60_000);

it('a payment whose answer was lost, settled 40 seconds late: read with the token its late settlement bought, never paid again while it lives, whatever a front answers', async () => {
  let losing = true;
  let dropToken = false;
  let refuseOnce = false;
  const lossy: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    // A front answering the token's read 402 and the payment sent again 502, once each.
    if (refuseOnce && headers.has('x-crawlgate-token')) return new Response('{}', { status: 402 });
    if (refuseOnce && headers.has('payment-signature')) {
      refuseOnce = false;
      return new Response('Bad Gateway', { status: 502 });
    }
    if (dropToken && headers.has('x-crawlgate-token')) {
      dropToken = false;
      headers.delete('x-crawlgate-token');
      return fetch(input, { ...init, headers });
    }
    if (losing && init?.method === 'POST') throw new TypeError('fetch failed');
    if (losing && new Headers(init?.headers).has('payment-signature')) {
      await (await fetch(input, init)).text();
      throw new TypeError('fetch failed');
    }
    return fetch(input, init);
  };
  const agent = await payingAgent(lossy);
  const url = `${siteUrl}/articles/settled-late`;
  const chain = devTestClient(gated.app.chain.rpcUrl);
  const { prisma } = gated.app.database;
  try {
    await chain.setAutomine(false);
    await expect(fetchPage(agent, url)).rejects.toThrow('fetch failed');
    moveClock(40);
    await chain.setAutomine(true);
    await chain.mine({ blocks: 1 });
    // The reconciler confirms it now: the token it issues lives a minute from here, 40 s after the payment was sent.
    for (let waited = 0; waited < 100; waited++) {
      const [payment] = await prisma.payment.findMany({ where: { url: '/articles/settled-late' } });
      if (payment?.status === 'confirmed') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    losing = false;
    moveClock(30); // 70 s after the send: past send + 60 s, but the token lives until 100 s
    refuseOnce = true;
    expect(await fetchPage(agent, url)).toEqual({ status: 502, body: 'Bad Gateway' }); // the front's answer, not a new payment
    expect(refuseOnce).toBe(false);
    expect(await fetchPage(agent, url)).toEqual({ status: 200, body: 'content of /articles/settled-late' });
    // The token lives until 100 s after the send: a front dropping it once has the payment sent again, not a new one.
    moveClock(5);
    dropToken = true;
    expect(await fetchPage(agent, url)).toEqual({ status: 200, body: 'content of /articles/settled-late' });
    expect(dropToken).toBe(false);
    expect(await paymentsFor('/articles/settled-late')).toEqual(['authorization']);
  } finally {
    await chain.setAutomine(true);
  }
}, 60_000);

it("the site's /.well-known/pay.json says how long its tokens last, as its API issues them", async () => {
  const answer = await fetch(`${siteUrl}/.well-known/pay.json`);
  expect(answer.status).toBe(200);
  expect(((await answer.json()) as { gate: { token_ttl_seconds: number } }).gate.token_ttl_seconds).toBe(TTL_SECONDS);
});
