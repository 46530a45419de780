/*
 * An API issuing short-lived access tokens (ACCESS_TOKEN_TTL_SECONDS of a minute): once a page's
 * token has expired, the agent pays the page anew, as the gate asks, rather than send again the
 * payment that bought the expired one, which the gate can only answer with that token. The real
 * gated site (Express), API and local chain; the clock moved forward for the agent, gate and API.
 * The site's pay.json says how long its tokens last.
 */

import { MIN_ACCESS_TOKEN_TTL_SECONDS } from '@crawlgate/core';
import { devTestClient } from '@crawlgate/devchain';
import {
  fetchPage,
  losingPaidAnswers,
  movingClock,
  startTokenLifeSite,
  type TokenLifeSite,
} from './support/token-life-site';

const TTL_SECONDS = MIN_ACCESS_TOKEN_TTL_SECONDS;

let site: TokenLifeSite;
beforeAll(async () => {
  // A settlement not mined in half a second is answered pending, and confirmed later by the reconciler.
  const chain = { settlementTimeoutMs: 500, reconcileIntervalMs: 200 };
  site = await startTokenLifeSite({ accessTokenTtlSeconds: TTL_SECONDS, chain });
}, 60_000);
afterAll(() => site.close(), 60_000);

// The chain's time stays: a settlement is held unmined while the clock moves, then mined.
const moveClock = movingClock();

it('a page read again after its one-minute token expired is paid anew, not refused for half an hour', async () => {
  const agent = await site.payingAgent();
  const url = `${site.url}/articles/short-lived`;
  const served = { status: 200, body: 'content of /articles/short-lived' };
  expect(await fetchPage(agent, url)).toEqual(served);
  await moveClock(TTL_SECONDS / 2);
  expect(await fetchPage(agent, url)).toEqual(served); // its token still opens it
  await moveClock(TTL_SECONDS / 2 + 5);
  expect(await fetchPage(agent, url)).toEqual(served);
  expect(await site.paymentsFor('/articles/short-lived')).toEqual(['authorization', 'authorization']);
  expect(agent.spent()).toMatchObject({ micros: 20_000n, payments: 2 });
}, 60_000);

it('a payment whose answer was lost while verify_url was unreachable, the page read again after its token expired: paid anew, not refused', async () => {
  const { state, fetchThrough } = losingPaidAnswers();
  const agent = await site.payingAgent(fetchThrough);
  const url = `${site.url}/articles/lost-then-expired`;
  await expect(fetchPage(agent, url)).rejects.toThrow('fetch failed');
  expect(await site.paymentsFor('/articles/lost-then-expired')).toEqual(['authorization']);
  state.losing = false;
  await moveClock(2 * TTL_SECONDS);
  expect(await fetchPage(agent, url)).toEqual({ status: 200, body: 'content of /articles/lost-then-expired' });
  expect(await site.paymentsFor('/articles/lost-then-expired')).toEqual(['authorization', 'authorization']);
}, 60_000);

it('a payment whose answer was lost, settled 40 seconds late: read with the token its late settlement bought, never paid again while it lives, whatever a front answers', async () => {
  let dropToken = false;
  let refuseOnce = false;
  const { state, fetchThrough } = losingPaidAnswers((input, init) => {
    const headers = new Headers(init?.headers);
    // A front answering the token's read 402 and the payment sent again 502, once each.
    if (refuseOnce && headers.has('x-crawlgate-token')) return Promise.resolve(new Response('{}', { status: 402 }));
    if (refuseOnce && headers.has('payment-signature')) {
      refuseOnce = false;
      return Promise.resolve(new Response('Bad Gateway', { status: 502 }));
    }
    if (dropToken && headers.has('x-crawlgate-token')) {
      dropToken = false;
      headers.delete('x-crawlgate-token');
      return fetch(input, { ...init, headers });
    }
    return undefined;
  });
  const agent = await site.payingAgent(fetchThrough);
  const url = `${site.url}/articles/settled-late`;
  const chain = devTestClient(site.gated.app.chain.rpcUrl);
  const { prisma } = site.gated.app.database;
  try {
    await chain.setAutomine(false);
    await expect(fetchPage(agent, url)).rejects.toThrow('fetch failed');
    await moveClock(40);
    await chain.setAutomine(true);
    await chain.mine({ blocks: 1 });
    // The reconciler confirms it now: the token it issues lives a minute from here, 40 s after the payment was sent.
    for (let waited = 0; waited < 100; waited++) {
      const [payment] = await prisma.payment.findMany({ where: { url: '/articles/settled-late' } });
      if (payment?.status === 'confirmed') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    state.losing = false;
    await moveClock(30); // 70 s after the send: past send + 60 s, but the token lives until 100 s
    refuseOnce = true;
    expect(await fetchPage(agent, url)).toEqual({ status: 502, body: 'Bad Gateway' }); // the front's answer, not a new payment
    expect(refuseOnce).toBe(false);
    expect(await fetchPage(agent, url)).toEqual({ status: 200, body: 'content of /articles/settled-late' });
    // The token lives until 100 s after the send: a front dropping it once has the payment sent again, not a new one.
    await moveClock(5);
    dropToken = true;
    expect(await fetchPage(agent, url)).toEqual({ status: 200, body: 'content of /articles/settled-late' });
    expect(dropToken).toBe(false);
    expect(await site.paymentsFor('/articles/settled-late')).toEqual(['authorization']);
  } finally {
    await chain.setAutomine(true);
  }
}, 60_000);

it("the site's /.well-known/pay.json says how long its tokens last, as its API issues them", async () => {
  const answer = await fetch(`${site.url}/.well-known/pay.json`);
  expect(answer.status).toBe(200);
  expect(((await answer.json()) as { gate: { token_ttl_seconds: number } }).gate.token_ttl_seconds).toBe(TTL_SECONDS);
});
