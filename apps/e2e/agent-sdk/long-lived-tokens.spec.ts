/*
 * An API issuing access tokens that outlive the default half hour (ACCESS_TOKEN_TTL_SECONDS of two
 * hours): a payment whose answer was lost is asked about again past the half hour, and the page
 * read with the token it bought while that token lives, never paid a second time. The real gated
 * site (Express), API and a local chain of its own; the clock moved forward for the agent, gate,
 * API and chain.
 */

import { encodeBase64Json, readGate } from '@crawlgate/core';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { forgedToken } from './support/forged-token';
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

const pathOf = (input: Parameters<typeof fetch>[0]) =>
  new URL(input instanceof Request ? input.url : input.toString()).pathname;

/**
 * A front answering its own 402 `{detail}` to the first payment for `path`, after its gate took it
 * (`sendOn`) or without sending it on; later payments pass. With `refuseVerify`, it stands in for
 * verify_url with a refusal of its own; `dropTokenReads` reads with a token fail as a dropped
 * connection, and `stripTokens` are sent on without their token (the gate answers its 402);
 * `redirectTo` answers the page's URL with a redirect there; `forgeVerify` answers verify_url with a
 * token it forged for the payment's gate.
 */
function refusingFront(path: string, { sendOn }: { sendOn: boolean }) {
  const control = {
    refusing: true,
    refuseVerify: false,
    dropTokenReads: 0,
    stripTokens: 0,
    redirectTo: undefined as string | undefined,
    forgeVerify: false,
  };
  const { state, fetchThrough } = losingPaidAnswers((input, init) => {
    if (init?.method === 'POST' && control.refuseVerify)
      return Promise.resolve(Response.json({ detail: 'no payment of this gate is recorded' }, { status: 402 }));
    if (init?.method === 'POST' && control.forgeVerify) {
      const gateId = decodeURIComponent(/\/gates\/([^/]+)\/verify$/.exec(pathOf(input))![1]);
      const now = Math.floor(Date.now() / 1000);
      const payload = {
        gate_id: readGate(gateId)!.ref,
        site_id: 'forged',
        kid: 'forged',
        url: path,
        iat: now,
        exp: now + 3600,
      };
      return Promise.resolve(Response.json({ status: 'paid', access_token: forgedToken(payload) }));
    }
    const headers = new Headers(init?.headers);
    const target = input instanceof Request ? input.url : input.toString();
    if (control.redirectTo && target === `${site.url}${path}`)
      return Promise.resolve(new Response(null, { status: 302, headers: { location: control.redirectTo } }));
    if (control.dropTokenReads > 0 && headers.has('x-crawlgate-token')) {
      control.dropTokenReads--;
      return Promise.reject(new TypeError('fetch failed'));
    }
    if (control.stripTokens > 0 && headers.has('x-crawlgate-token')) {
      control.stripTokens--;
      headers.delete('x-crawlgate-token');
      return fetch(input, { ...init, headers });
    }
    if (!control.refusing || pathOf(input) !== path || !new Headers(init?.headers).has('payment-signature'))
      return undefined;
    control.refusing = false;
    const refusal = () => Response.json({ detail: 'the payment was refused' }, { status: 402 });
    return sendOn ? fetch(input, init).then((answer) => answer.text().then(refusal)) : Promise.resolve(refusal());
  });
  state.losing = false;
  return { control, fetchThrough };
}

/**
 * An agent (reading the site's chain, or `rpcUrl`'s) whose first payment for `path` a refusingFront
 * answered with its own 402; `refuseVerify` as the front's.
 */
async function refusedOnce(
  path: string,
  {
    sendOn = true,
    refuseVerify = false,
    rpcUrl,
  }: { sendOn?: boolean; refuseVerify?: boolean; rpcUrl?: string | null } = {},
) {
  const front = refusingFront(path, { sendOn });
  front.control.refuseVerify = refuseVerify;
  const agent = await site.payingAgent(front.fetchThrough, undefined, rpcUrl === undefined ? {} : { rpcUrl });
  const url = `${site.url}${path}`;
  expect(await fetchPage(agent, url)).toMatchObject({ reason: 'payment_refused' });
  return { front, agent, url, served: { status: 200, body: `content of ${path}` } };
}

it("a front's own 402 to a payment its gate settled, the page fetched again past the half hour the agent knows tokens to live: read with the two-hour token verify_url answers for that payment, not paid again", async () => {
  const path = '/articles/refused-but-settled';
  const { agent, url, served } = await refusedOnce(path);
  expect(await site.paymentsFor(path)).toEqual(['authorization']);
  await moveClock(40 * 60);
  expect(await fetchPage(agent, url)).toEqual(served);
  expect(await site.paymentsFor(path)).toEqual(['authorization']);
  expect(agent.spent()).toMatchObject({ micros: 10_000n, payments: 1, reservedUsd: '0' });
  // Its receipt reads the page while its two-hour token lives.
  await moveClock(40 * 60);
  expect(await fetchPage(agent, url)).toEqual(served);
  expect(await site.paymentsFor(path)).toEqual(['authorization']);
}, 60_000);

it("a front's own 402 to a payment its gate settled, standing in for verify_url with a refusal: the chain shows the authorization used, and the page is not paid again while a token it bought could live", async () => {
  const path = '/articles/refused-settled-verify-refused';
  const { agent, url, served } = await refusedOnce(path, { refuseVerify: true });
  await moveClock(10 * 60);
  expect(await fetchPage(agent, url)).toMatchObject({ reason: 'payment_unconfirmed' });
  expect(await site.paymentsFor(path)).toEqual(['authorization']);
  // Past the life a token it bought could have (the site's, as far as the agent has seen: the default half hour).
  await moveClock(30 * 60);
  expect(await fetchPage(agent, url)).toEqual(served);
  expect(await site.paymentsFor(path)).toEqual(['authorization', 'authorization']);
}, 60_000);

it("a front's own 402 to a payment it never sent on: past the authorization's hold, verify_url knows none and the chain shows it unused, and the page is paid, once", async () => {
  const path = '/articles/refused-never-sent';
  const { agent, url, served } = await refusedOnce(path, { sendOn: false });
  expect(await site.paymentsFor(path)).toEqual([]);
  expect(await fetchPage(agent, url)).toMatchObject({ reason: 'payment_held' });
  await moveClock(10 * 60);
  expect(await fetchPage(agent, url)).toEqual(served);
  expect(await site.paymentsFor(path)).toEqual(['authorization']);
  expect(agent.spent()).toMatchObject({ micros: 10_000n, payments: 1, reservedUsd: '0' });
}, 60_000);

it("with no chain client to read, a front's own 402 to a payment its gate settled: the token verify_url answers reads the page; to one it never sent on: the API's refusal has the page paid", async () => {
  const settled = '/articles/refused-settled-no-chain';
  const first = await refusedOnce(settled, { rpcUrl: null });
  await moveClock(10 * 60);
  expect(await fetchPage(first.agent, first.url)).toEqual(first.served);
  expect(await site.paymentsFor(settled)).toEqual(['authorization']);
  expect(first.agent.spent()).toMatchObject({ micros: 10_000n, payments: 1, reservedUsd: '0' });

  const neverSent = '/articles/refused-never-sent-no-chain';
  const { agent: other, url, served } = await refusedOnce(neverSent, { sendOn: false, rpcUrl: null });
  await moveClock(10 * 60);
  expect(await fetchPage(other, url)).toEqual(served);
  expect(await site.paymentsFor(neverSent)).toEqual(['authorization']);
  // Nothing can say what became of the refused one: it stays reserved, as every refused one does without a chain client.
  expect(other.spent()).toMatchObject({ micros: 10_000n, payments: 1, reservedUsd: '0.01' });
}, 60_000);

it('a payment whose answer was lost, a front standing in for verify_url with a refusal: the chain shows the authorization used, and the page is not paid again while a token it bought could live', async () => {
  const path = '/articles/lost-verify-refused';
  const control = { refuseVerify: false };
  const { state, fetchThrough } = losingPaidAnswers((_input, init) =>
    control.refuseVerify && init?.method === 'POST'
      ? Promise.resolve(Response.json({ detail: 'no payment of this gate is recorded' }, { status: 402 }))
      : undefined,
  );
  const agent = await site.payingAgent(fetchThrough);
  await expect(fetchPage(agent, `${site.url}${path}`)).rejects.toThrow('fetch failed');
  state.losing = false;
  control.refuseVerify = true;
  await moveClock(10 * 60);
  for (const _fetch of [1, 2])
    expect(await fetchPage(agent, `${site.url}${path}`)).toMatchObject({ reason: 'payment_unconfirmed' });
  expect(await site.paymentsFor(path)).toEqual(['authorization']);
  // Past the life a token it bought could have (the site's, as far as the agent has seen: the default half hour).
  await moveClock(30 * 60);
  expect(await fetchPage(agent, `${site.url}${path}`)).toEqual({ status: 200, body: `content of ${path}` });
  expect(await site.paymentsFor(path)).toEqual(['authorization', 'authorization']);
}, 60_000);

it("a front's own 402 to a payment its gate settled, then the read with the token verify_url answers dropped and the token kept from the gate: the next fetch reads the page with that payment, not paid again", async () => {
  const path = '/articles/refused-settled-read-dropped';
  const { front, agent, url, served } = await refusedOnce(path);
  await moveClock(10 * 60);
  front.control.dropTokenReads = 1;
  await expect(fetchPage(agent, url)).rejects.toThrow('fetch failed');
  front.control.stripTokens = 1;
  expect(await fetchPage(agent, url)).toEqual(served);
  expect(await site.paymentsFor(path)).toEqual(['authorization']);
  expect(agent.spent()).toMatchObject({ micros: 10_000n, payments: 1, reservedUsd: '0' });
}, 60_000);

it("a front's own 402 to a payment its gate settled, standing in for verify_url with a refusal, the agent's chain unreadable: the page is not paid again while a token it bought could live", async () => {
  const path = '/articles/refused-settled-rpc-down';
  const { agent, url } = await refusedOnce(path, { refuseVerify: true, rpcUrl: 'http://127.0.0.1:9' });
  await moveClock(10 * 60);
  expect(await fetchPage(agent, url)).toMatchObject({ reason: 'payment_unconfirmed' });
  expect(await site.paymentsFor(path)).toEqual(['authorization']);
}, 60_000);

it("a front taking a gate's 402 for a plain x402 site's (its v2 offer and verify_url taken out), its own 402 to a payment the gate settled: the chain shows the authorization used, and the page is not paid again", async () => {
  const path = '/articles/refused-settled-plain';
  const asPlainX402 = async (answer: Response) => {
    if (answer.status !== 402) return answer;
    const body = (await answer.json()) as { verify_url?: string };
    delete body.verify_url;
    const headers = new Headers(answer.headers);
    headers.delete('payment-required');
    return new Response(JSON.stringify(body), { status: 402, headers });
  };
  let refusing = true;
  const { state, fetchThrough } = losingPaidAnswers((input, init) => {
    const paid = new Headers(init?.headers).has('x-payment');
    if (!paid) return fetch(input, init).then(asPlainX402);
    if (!refusing) return undefined;
    refusing = false;
    return fetch(input, init).then((answer) =>
      answer.text().then(() => Response.json({ detail: 'the payment was refused' }, { status: 402 })),
    );
  });
  state.losing = false;
  const agent = await site.payingAgent(fetchThrough);
  expect(await fetchPage(agent, `${site.url}${path}`)).toMatchObject({ reason: 'payment_refused' });
  expect(await site.paymentsFor(path)).toEqual(['authorization']);
  await moveClock(10 * 60);
  expect(await fetchPage(agent, `${site.url}${path}`)).toMatchObject({ reason: 'payment_unconfirmed' });
  expect(await site.paymentsFor(path)).toEqual(['authorization']);
}, 60_000);

it('a front answering a payment settled (a forged settlement, no token) while it holds it, verify_url failing, then having its gate settle it late: the page is not paid again while the token so issued lives', async () => {
  const path = '/articles/settled-late';
  const held: { input?: Parameters<typeof fetch>[0]; init?: RequestInit } = {};
  const control = { failVerify: false, refuseResends: false };
  const { state, fetchThrough } = losingPaidAnswers((input, init) => {
    if (init?.method === 'POST' && control.failVerify) return Promise.reject(new TypeError('fetch failed'));
    const paid = new Headers(init?.headers).get('payment-signature');
    if (pathOf(input) !== path || paid === null) return undefined;
    if (held.init) {
      const resent = paid === new Headers(held.init.headers).get('payment-signature');
      return resent && control.refuseResends ? Promise.resolve(Response.json({}, { status: 402 })) : undefined;
    }
    Object.assign(held, { input, init });
    const settlement = encodeBase64Json({ success: true, transaction: `0x${'ab'.repeat(32)}`, network: 'local' });
    return Promise.resolve(new Response(`content of ${path}`, { headers: { 'payment-response': settlement } }));
  });
  state.losing = false;
  const agent = await site.payingAgent(fetchThrough);
  // The site's two-hour tokens, seen on another page.
  expect(await fetchPage(agent, `${site.url}/articles/before-settled-late`)).toMatchObject({ status: 200 });
  control.failVerify = true;
  expect(await fetchPage(agent, `${site.url}${path}`)).toEqual({ status: 200, body: `content of ${path}` });
  expect(await site.paymentsFor(path)).toEqual([]);
  // Four minutes on, within its authorization's life, the front has the gate settle it: its token lives two hours from then.
  await moveClock(4 * 60);
  expect((await fetch(held.input!, held.init)).status).toBe(200);
  expect(await site.paymentsFor(path)).toEqual(['authorization']);
  control.refuseResends = true;
  await moveClock(TTL_SECONDS - 3 * 60);
  expect(await fetchPage(agent, `${site.url}${path}`)).toMatchObject({ reason: 'payment_unconfirmed' });
  expect(await site.paymentsFor(path)).toEqual(['authorization']);
  // Past a token's life from its authorization's validBefore (five minutes after the payment at most): paid anew.
  await moveClock(5 * 60);
  expect(await fetchPage(agent, `${site.url}${path}`)).toEqual({ status: 200, body: `content of ${path}` });
  expect(await site.paymentsFor(path)).toEqual(['authorization', 'authorization']);
}, 60_000);

it("a front's own 402 to a payment its gate settled, then a redirect to another spelling of the site (localhost for 127.0.0.1): the page is read with that payment, not paid again", async () => {
  const path = '/articles/refused-settled-redirected';
  const { front, agent, url, served } = await refusedOnce(path);
  await moveClock(10 * 60);
  front.control.redirectTo = url.replace('127.0.0.1', 'localhost');
  expect(await fetchPage(agent, url)).toEqual(served);
  // The redirect gone, the page under its own spelling is read with that payment too.
  front.control.redirectTo = undefined;
  front.control.stripTokens = 1;
  expect(await fetchPage(agent, url)).toEqual(served);
  expect(await site.paymentsFor(path)).toEqual(['authorization']);
}, 60_000);

it('a payment a site refused without taking it, on a chain that mines on demand and has been idle since: past the hold, the API saying it knows none has the page paid, not held for the chain', async () => {
  const path = '/articles/refused-idle-chain';
  const { agent, url, served } = await refusedOnce(path, { sendOn: false });
  // Past the hold (its validBefore, five minutes on, and a minute), within the authorizations' ten
  // minutes of clock skew back (validAfter), which the simulation on this chain's stale newest block reads.
  await moveClock(7 * 60, { mine: false });
  expect(await fetchPage(agent, url)).toEqual(served);
  expect(await site.paymentsFor(path)).toEqual(['authorization']);
}, 60_000);

it("a front's own 402 to a payment it never sent on, then a token it forged answered for verify_url: the chain shows the authorization unused, so the token is not taken, the payment not counted, and the page paid once", async () => {
  const path = '/articles/refused-forged-token';
  const { front, agent, url, served } = await refusedOnce(path, { sendOn: false });
  front.control.forgeVerify = true;
  await moveClock(10 * 60);
  expect(await fetchPage(agent, url)).toEqual(served);
  expect(await site.paymentsFor(path)).toEqual(['authorization']);
  expect(agent.spent()).toMatchObject({ micros: 10_000n, payments: 1, reservedUsd: '0' });
}, 60_000);

it("a front's own 402 to a payment it never sent on, then a token it forged answered for verify_url before the chain is final: not taken until the chain shows the authorization unused, then the page is paid once", async () => {
  const path = '/articles/refused-forged-token-pending';
  const { front, agent, url, served } = await refusedOnce(path, { sendOn: false });
  front.control.forgeVerify = true;
  // The chain five and a half minutes on, short of its validBefore and a minute; the agent past its hold.
  await moveClock(330);
  await moveClock(40, { mine: false });
  expect(await fetchPage(agent, url)).toMatchObject({ reason: 'payment_unconfirmed' });
  await moveClock(60);
  expect(await fetchPage(agent, url)).toEqual(served);
  expect(await site.paymentsFor(path)).toEqual(['authorization']);
  expect(agent.spent()).toMatchObject({ micros: 10_000n, payments: 1, reservedUsd: '0' });
}, 60_000);

it("a front's own 402 to a payment its gate settled, then a redirect to the page under another spelling of its site with a query added: read with that payment, not paid again", async () => {
  const path = '/articles/refused-settled-redirected-query';
  const { front, agent, url, served } = await refusedOnce(path);
  await moveClock(10 * 60);
  front.control.redirectTo = `${url.replace('127.0.0.1', 'localhost')}?utm_source=front`;
  expect(await fetchPage(agent, url)).toEqual(served);
  expect(await site.paymentsFor(path)).toEqual(['authorization']);
}, 60_000);

it("a front's own 402 to a payment its gate settled, the site's two-hour tokens learned since, then a redirect to another spelling of the site with verify_url refused: not paid again while the token it bought lives", async () => {
  const path = '/articles/refused-settled-redirected-life';
  const { front, agent, url } = await refusedOnce(path, { refuseVerify: true });
  expect(await fetchPage(agent, `${site.url}/articles/life-seen`)).toMatchObject({ status: 200 });
  // Past the default half hour from its validBefore, within the two hours the site's tokens live.
  await moveClock(40 * 60);
  front.control.redirectTo = url.replace('127.0.0.1', 'localhost');
  expect(await fetchPage(agent, url)).toMatchObject({ reason: 'payment_unconfirmed' });
  expect(await site.paymentsFor(path)).toEqual(['authorization']);
}, 60_000);

it("a refused payment kept under the URL asked for, that URL later redirecting to another site with the same path: the payment's token and header never reach that site", async () => {
  // E/x sent the agent to the gated site's /x, whose front refused the payment its gate took; later
  // E/x sends it to E2/x instead, a site of the attacker's answering 402. The payment kept under E/x
  // must not be asked about for E2's page: its token, read from the gated site's API, would be sent
  // to E2 and opened E2's answer as the page bought.
  const path = '/articles/refused-then-redirected-elsewhere';
  const seen: IncomingHttpHeaders[] = [];
  const elsewhere = createServer((request, response) => {
    seen.push(request.headers);
    response.writeHead(402, { 'content-type': 'application/json' }).end(JSON.stringify({ stolen: true }));
  });
  await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
  try {
    const redirector = `http://127.0.0.1:9${path}`; // E: answered here, never reached
    const target = { location: `${site.url}${path}` };
    const front = refusingFront(path, { sendOn: true });
    const viaRedirector: typeof fetch = (input, init) =>
      (input instanceof Request ? input.url : input.toString()) === redirector
        ? Promise.resolve(new Response(null, { status: 302, headers: target }))
        : front.fetchThrough(input, init);
    const agent = await site.payingAgent(viaRedirector);
    expect(await fetchPage(agent, redirector)).toMatchObject({ reason: 'payment_refused' });
    expect(await site.paymentsFor(path)).toEqual(['authorization']);
    await moveClock(10 * 60);
    target.location = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}${path}`;
    // E2's own offer is what the agent judges (here none it can pay).
    await expect(fetchPage(agent, redirector)).rejects.toThrow('offers no "exact" payment');
    expect(seen.length).toBeGreaterThan(0);
    for (const headers of seen) {
      expect(headers['x-crawlgate-token']).toBeUndefined();
      expect(headers['payment-signature']).toBeUndefined();
      expect(headers['x-payment']).toBeUndefined();
    }
    // The gated site's page itself is still read with that payment, not paid again.
    target.location = `${site.url}${path}`;
    expect(await fetchPage(agent, redirector)).toEqual({ status: 200, body: `content of ${path}` });
    expect(await site.paymentsFor(path)).toEqual(['authorization']);
  } finally {
    elsewhere.closeAllConnections();
    await new Promise((resolve) => elsewhere.close(resolve));
  }
}, 60_000);
