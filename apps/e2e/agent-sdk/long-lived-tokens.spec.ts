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

it("a site whose two-hour tokens the agent has seen: another page's lost answer, its API unreachable 40 minutes on, is not paid a second time", async () => {
  const { state, fetchThrough } = losingPaidAnswers();
  state.losing = false;
  const agent = await site.payingAgent(fetchThrough);
  const first = `${site.url}/articles/seen-first`;
  expect(await fetchPage(agent, first)).toEqual({ status: 200, body: 'content of /articles/seen-first' });
  state.losing = true;
  const url = `${site.url}/articles/lost-unreachable`;
  await expect(fetchPage(agent, url)).rejects.toThrow('fetch failed');
  await moveClock(40 * 60);
  // Its API still cannot be asked: the token its payment bought may open the page for 80 minutes more.
  expect(await fetchPage(agent, url)).toMatchObject({ reason: 'payment_unconfirmed' });
  expect(await site.paymentsFor('/articles/lost-unreachable')).toEqual(['authorization']);
  state.losing = false;
  expect(await fetchPage(agent, url)).toEqual({ status: 200, body: 'content of /articles/lost-unreachable' });
  expect(await site.paymentsFor('/articles/lost-unreachable')).toEqual(['authorization']);
}, 60_000);

it("a payment whose answer was lost before the site's two-hour tokens were seen, its API unreachable 40 minutes on after another page showed them: not paid a second time", async () => {
  const { state, fetchThrough } = losingPaidAnswers();
  const agent = await site.payingAgent(fetchThrough);
  const url = `${site.url}/articles/lost-before-learned`;
  await expect(fetchPage(agent, url)).rejects.toThrow('fetch failed');
  state.losing = false;
  const other = `${site.url}/articles/learned-after-loss`;
  expect(await fetchPage(agent, other)).toEqual({ status: 200, body: 'content of /articles/learned-after-loss' });
  state.losing = true;
  await moveClock(40 * 60);
  // Its API still cannot be asked: the token its payment bought may open the page for 80 minutes more.
  expect(await fetchPage(agent, url)).toMatchObject({ reason: 'payment_unconfirmed' });
  expect(await site.paymentsFor('/articles/lost-before-learned')).toEqual(['authorization']);
  state.losing = false;
  expect(await fetchPage(agent, url)).toEqual({ status: 200, body: 'content of /articles/lost-before-learned' });
  expect(await site.paymentsFor('/articles/lost-before-learned')).toEqual(['authorization']);
}, 60_000);

it('a payment whose answer was lost, its 402 stripped of verify_url by a front (the offer still names the gate): not paid again while the token it bought could live', async () => {
  const withoutVerifyUrl = async (answer: Response) => {
    if (answer.status !== 402) return answer;
    const body = (await answer.json()) as { verify_url?: string };
    delete body.verify_url;
    return new Response(JSON.stringify(body), { status: 402, headers: answer.headers });
  };
  const { state, fetchThrough } = losingPaidAnswers((input, init) =>
    new Headers(init?.headers).has('payment-signature') ? undefined : fetch(input, init).then(withoutVerifyUrl),
  );
  const agent = await site.payingAgent(fetchThrough);
  const path = '/articles/lost-no-verify-url';
  await expect(fetchPage(agent, `${site.url}${path}`)).rejects.toThrow('fetch failed');
  state.losing = false;
  await moveClock(10 * 60);
  expect(await fetchPage(agent, `${site.url}${path}`)).toMatchObject({ reason: 'payment_unconfirmed' });
  expect(await site.paymentsFor(path)).toEqual(['authorization']);
  // Past the life a token it bought could have: the page is paid anew.
  await moveClock(30 * 60 + TTL_SECONDS);
  expect(await fetchPage(agent, `${site.url}${path}`)).toEqual({ status: 200, body: `content of ${path}` });
  expect(await site.paymentsFor(path)).toEqual(['authorization', 'authorization']);
}, 60_000);
