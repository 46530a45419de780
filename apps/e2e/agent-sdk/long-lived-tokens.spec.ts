/*
 * An API issuing access tokens that outlive the default half hour (ACCESS_TOKEN_TTL_SECONDS of two
 * hours): a payment whose answer was lost is asked about again past the half hour, and the page
 * read with the token it bought while that token lives, never paid a second time. The real gated
 * site (Express), API and local chain (its own, reverted at the file's end); the clock moved
 * forward for the agent, gate and API, and the chain.
 */

import { increaseTime } from '@crawlgate/devchain';
import { crawlgateExpress } from '@crawlgate/middleware/express';
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fundUsdc, newWallet } from '../../../apps/api/test/test-agent';
import { startGatedSite, GPTBOT, type GatedSite } from '../middleware/support/gated-site';
import { createAgent, PaymentFailedError } from '../../../libs/agent-sdk/src';

const TTL_SECONDS = 2 * 3600;

let gated: GatedSite;
let server: Server;
let siteUrl: string;

beforeAll(async () => {
  gated = await startGatedSite({ app: { isolateChain: true, config: { accessTokenTtlSeconds: TTL_SECONDS } } });
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

/** How far Date.now (the agent's, the gate's and the API's: one process) runs ahead in this test; the chain's moves with it. */
let ahead = 0;
const realNow = Date.now.bind(Date);
beforeEach(() => {
  ahead = 0;
  jest.spyOn(Date, 'now').mockImplementation(() => realNow() + ahead);
});
afterEach(() => jest.restoreAllMocks());

async function moveClock(seconds: number): Promise<void> {
  ahead += seconds * 1000;
  await increaseTime(gated.app.chain.rpcUrl, seconds);
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

/**
 * While `losing` says so, the paid request reaches the gate, which settles it, and its answer is
 * lost, and the posts to verify_url fail: the payment's outcome stays unknown.
 */
function losingPaidAnswers() {
  const state = { losing: true };
  const fetchThrough: typeof fetch = async (input, init) => {
    if (state.losing && init?.method === 'POST') throw new TypeError('fetch failed');
    if (state.losing && new Headers(init?.headers).has('payment-signature')) {
      await (await fetch(input, init)).text();
      throw new TypeError('fetch failed');
    }
    return fetch(input, init);
  };
  return { state, fetchThrough };
}

async function payingAgent(fetch: typeof globalThis.fetch) {
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

it('a payment whose answer was lost, the page read again 40 minutes on: opened with the two-hour token it bought, not paid twice', async () => {
  const { state, fetchThrough } = losingPaidAnswers();
  const agent = await payingAgent(fetchThrough);
  const url = `${siteUrl}/articles/lost-long-lived`;
  await expect(fetchPage(agent, url)).rejects.toThrow('fetch failed');
  expect(await paymentsFor('/articles/lost-long-lived')).toEqual(['authorization']);
  state.losing = false;
  await moveClock(40 * 60);
  expect(await fetchPage(agent, url)).toEqual({ status: 200, body: 'content of /articles/lost-long-lived' });
  expect(await paymentsFor('/articles/lost-long-lived')).toEqual(['authorization']);
  expect(agent.spent()).toMatchObject({ micros: 10_000n, payments: 1 });
  // Its receipt opens the page while the token lives, and past it the page is paid anew.
  await moveClock(60 * 60);
  expect(await fetchPage(agent, url)).toEqual({ status: 200, body: 'content of /articles/lost-long-lived' });
  expect(await paymentsFor('/articles/lost-long-lived')).toEqual(['authorization']);
  await moveClock(TTL_SECONDS);
  expect(await fetchPage(agent, url)).toEqual({ status: 200, body: 'content of /articles/lost-long-lived' });
  expect(await paymentsFor('/articles/lost-long-lived')).toEqual(['authorization', 'authorization']);
}, 60_000);
