/*
 * An API issuing access tokens that outlive the default half hour (ACCESS_TOKEN_TTL_SECONDS of two
 * hours): a payment whose answer was lost is asked about again past the half hour, and the page
 * read with the token it bought while that token lives, never paid a second time. The real gated
 * site (Express), API and a local chain of its own; the clock moved forward for the agent, gate,
 * API and chain.
 */

import {
  fetchPage,
  losingPaidAnswers,
  movingClock,
  startTokenLifeSite,
  type TokenLifeSite,
} from './support/token-life-site';

const TTL_SECONDS = 2 * 3600;

let site: TokenLifeSite;
beforeAll(async () => void (site = await startTokenLifeSite({ accessTokenTtlSeconds: TTL_SECONDS })), 60_000);
afterAll(() => site.close(), 60_000);

const moveClock = movingClock(() => site.gated.app.chain.rpcUrl);

it('a payment whose answer was lost, the page read again 40 minutes on: opened with the two-hour token it bought, not paid twice', async () => {
  const { state, fetchThrough } = losingPaidAnswers();
  const agent = await site.payingAgent(fetchThrough);
  const url = `${site.url}/articles/lost-long-lived`;
  const served = { status: 200, body: 'content of /articles/lost-long-lived' };
  await expect(fetchPage(agent, url)).rejects.toThrow('fetch failed');
  expect(await site.paymentsFor('/articles/lost-long-lived')).toEqual(['authorization']);
  state.losing = false;
  await moveClock(40 * 60);
  expect(await fetchPage(agent, url)).toEqual(served);
  expect(await site.paymentsFor('/articles/lost-long-lived')).toEqual(['authorization']);
  expect(agent.spent()).toMatchObject({ micros: 10_000n, payments: 1 });
  // Its receipt opens the page while the token lives, and past it the page is paid anew.
  await moveClock(60 * 60);
  expect(await fetchPage(agent, url)).toEqual(served);
  expect(await site.paymentsFor('/articles/lost-long-lived')).toEqual(['authorization']);
  await moveClock(TTL_SECONDS);
  expect(await fetchPage(agent, url)).toEqual(served);
  expect(await site.paymentsFor('/articles/lost-long-lived')).toEqual(['authorization', 'authorization']);
}, 60_000);
