/*
 * A site whose API issues two-hour access tokens, paid by batch-settlement vouchers and exact
 * payments through a hostile front that loses the gate's answers, refuses what the agent sends
 * again, fails its verify_url posts and forges tokens (which the agent cannot check): a page that
 * may have been bought is not paid again while a token it bought could still open it, however
 * late the agent learned how long the site's tokens live. The real gated site (Express), API and
 * a local chain of its own; the clock moved forward for the agent, gate, API and chain.
 */

import { peekAccessTokenPayload } from '@crawlgate/core';
import { forgedToken } from './support/forged-token';
import {
  fetchPage,
  losingPaidAnswers,
  movingClock,
  startTokenLifeSite,
  type TokenLifeSite,
} from './support/token-life-site';

const TTL_SECONDS = 2 * 3600;
const DEPOSIT_USD = '0.5';

let site: TokenLifeSite;
beforeAll(async () => {
  site = await startTokenLifeSite({ accessTokenTtlSeconds: TTL_SECONDS }, { batchSettlement: true });
}, 60_000);
afterAll(() => site.close(), 60_000);

const moveClock = movingClock(() => site.gated.app.chain.rpcUrl);

const served = (path: string) => ({ status: 200, body: `content of ${path}` });
const pathOf = (input: Parameters<typeof fetch>[0]) =>
  new URL(input instanceof Request ? input.url : input.toString()).pathname;

/**
 * A front before the site: while `losing`, a paid request reaches the gate and its answer is lost
 * (the gate's token kept in `tokens`, by path), and verify_url posts fail; once `refuse(path)`,
 * every payment sent for the path until then is answered with a bare 402 of the front's own when
 * sent again (a new one passes), until `behave()`; `failVerify` keeps the verify_url posts failing; `answer` may
 * answer a paid request of a path itself.
 */
function hostileFront() {
  const tokens = new Map<string, string>();
  const sent = new Map<string, Set<string>>();
  const refused = new Set<string>();
  const control = {
    failVerify: false,
    answer: undefined as ((path: string) => Response | undefined) | undefined,
  };
  const { state, fetchThrough } = losingPaidAnswers((input, init) => {
    const paid = new Headers(init?.headers).get('payment-signature');
    if (init?.method === 'POST' && control.failVerify) return Promise.reject(new TypeError('fetch failed'));
    if (paid === null) return undefined;
    const path = pathOf(input);
    if (refused.has(paid)) return Promise.resolve(Response.json({}, { status: 402 }));
    sent.set(path, (sent.get(path) ?? new Set()).add(paid));
    const own = control.answer?.(path);
    if (own) return Promise.resolve(own);
    if (!state.losing) return undefined;
    return fetch(input, init).then(async (answer) => {
      const token = answer.headers.get('x-crawlgate-token');
      if (token) tokens.set(path, token);
      await answer.text();
      throw new TypeError('fetch failed');
    });
  });
  state.losing = false;
  const refuse = (path: string) => sent.get(path)?.forEach((header) => refused.add(header));
  /** From now on every payment passes, and verify_url answers. */
  const behave = () => {
    refused.clear();
    control.failVerify = false;
  };
  return { state, fetchThrough, tokens, refuse, behave, control };
}

it("a lost voucher, the site's two-hour tokens learned only after it was sent: refused by a front past the half hour with verify_url failing, its page is not paid again while its token could live", async () => {
  const front = hostileFront();
  const agent = await site.payingAgent(front.fetchThrough, DEPOSIT_USD);
  const lost = '/articles/voucher-lost-early';
  front.state.losing = true;
  await expect(fetchPage(agent, `${site.url}${lost}`)).rejects.toThrow('fetch failed');
  expect(await site.paymentsFor(lost)).toEqual(['voucher']);
  front.state.losing = false;
  // Another page, bought now: its token shows the site's tokens live two hours.
  const learned = '/articles/voucher-learned-after';
  expect(await fetchPage(agent, `${site.url}${learned}`)).toEqual(served(learned));
  front.refuse(lost);
  front.control.failVerify = true;
  await moveClock(50 * 60);
  // The token the lost voucher bought opens its page for 70 minutes more.
  expect(await fetchPage(agent, `${site.url}${lost}`)).toMatchObject({ reason: 'payment_unconfirmed' });
  expect(await site.paymentsFor(lost)).toEqual(['voucher']);
  // Past its gate's hold and two hours from it, what it bought is over: the page is paid anew.
  await moveClock(90 * 60);
  front.behave();
  expect(await fetchPage(agent, `${site.url}${lost}`)).toEqual(served(lost));
  expect(await site.paymentsFor(lost)).toEqual(['voucher', 'voucher']);
}, 60_000);

it('a lost voucher sent again past its hold, answered by a front with a token forged to have expired: the receipt it leaves does not end while a token it bought could live', async () => {
  const front = hostileFront();
  const agent = await site.payingAgent(front.fetchThrough, DEPOSIT_USD);
  const learned = '/articles/voucher-learned-before';
  expect(await fetchPage(agent, `${site.url}${learned}`)).toEqual(served(learned));
  const lost = '/articles/voucher-lost-forged';
  front.state.losing = true;
  await expect(fetchPage(agent, `${site.url}${lost}`)).rejects.toThrow('fetch failed');
  front.state.losing = false;
  const real = peekAccessTokenPayload(front.tokens.get(lost)!)!;
  front.control.failVerify = true;
  // Past the gate's hold: a "maintenance" page of the front's own, with a token forged to expire as issued.
  front.control.answer = (path) =>
    path === lost
      ? new Response('maintenance', { headers: { 'x-crawlgate-token': forgedToken({ ...real, exp: real.iat }) } })
      : undefined;
  await moveClock(17 * 60);
  expect(await fetchPage(agent, `${site.url}${lost}`)).toEqual({ status: 200, body: 'maintenance' });
  front.control.answer = undefined;
  front.refuse(lost);
  await moveClock(15 * 60);
  expect(await fetchPage(agent, `${site.url}${lost}`)).toMatchObject({ reason: 'payment_unconfirmed' });
  expect(await site.paymentsFor(lost)).toEqual(['voucher']);
  // Two hours from the end of its gate's hold (some 16 minutes after the send), the token it bought has expired: the page is paid anew.
  await moveClock(110 * 60);
  front.behave();
  expect(await fetchPage(agent, `${site.url}${lost}`)).toEqual(served(lost));
  expect(await site.paymentsFor(lost)).toEqual(['voucher', 'voucher']);
}, 60_000);

it('an exact payment whose paid answer a front gave a token forged to have expired, on a site of two-hour tokens: refused when sent again with verify_url failing, the page is not paid again half an hour on', async () => {
  const front = hostileFront();
  const forged = '/articles/exact-forged-expired';
  // The front passes the page's paid answer on with its token replaced by one forged to expire as issued.
  const forging: typeof fetch = async (input, init) => {
    const answer = await front.fetchThrough(input, init);
    const token = answer.headers.get('x-crawlgate-token');
    if (!token || pathOf(input) !== forged) return answer;
    const payload = peekAccessTokenPayload(token)!;
    const headers = new Headers(answer.headers);
    headers.set('x-crawlgate-token', forgedToken({ ...payload, exp: payload.iat }));
    return new Response(await answer.text(), { status: answer.status, headers });
  };
  const agent = await site.payingAgent(forging);
  const learned = '/articles/exact-learned-before';
  expect(await fetchPage(agent, `${site.url}${learned}`)).toEqual(served(learned));
  expect(await fetchPage(agent, `${site.url}${forged}`)).toEqual(served(forged));
  front.refuse(forged);
  front.control.failVerify = true;
  await moveClock(31 * 60);
  // The real token opens the page for 89 minutes more.
  expect(await fetchPage(agent, `${site.url}${forged}`)).toMatchObject({ reason: 'payment_unconfirmed' });
  expect(await site.paymentsFor(forged)).toEqual(['authorization']);
  // Two hours on, the real token has expired: the page is paid anew.
  await moveClock(90 * 60);
  front.behave();
  expect(await fetchPage(agent, `${site.url}${forged}`)).toEqual(served(forged));
  expect(await site.paymentsFor(forged)).toEqual(['authorization', 'authorization']);
}, 60_000);
