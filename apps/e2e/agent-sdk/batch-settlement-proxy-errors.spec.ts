/*
 * @crawlgate/agent paying with batch-settlement vouchers through a front server (a CDN, a rate
 * limiter, a proxy) that answers some paid retries itself: 429 without passing the voucher on, or
 * 502 after the gate charged it. The real gated site (Express), API and local chain behind it.
 * A voucher counts as charged only on the gate's PAYMENT-RESPONSE: the agent resends the same
 * header (the API answers it idempotently), and the channel never locks nor pays a page twice.
 */

import {
  BATCH_REASONS,
  base64urlEncodeUtf8,
  decodeBase64Json,
  encodeBase64Json,
  peekAccessTokenPayload,
  DeadlineError,
  readGate,
  withinDeadline,
} from '@crawlgate/core';
import { increaseTime } from '@crawlgate/devchain';
import { mkdtempSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { ClaimerHeartbeatStore } from '../../../apps/api/src/batch-settlement/claimer-heartbeat.store';
import { fundEth, fundUsdc, newWallet } from '../../../apps/api/test/test-agent';
import { GPTBOT, type GatedSite } from '../middleware/support/gated-site';
import { page, type SiteServer } from '../middleware/support/site-servers';
import { depositsOf as depositsOfSite, startVoucherSite } from '../middleware/support/voucher-site';
import { forgedToken } from './support/forged-token';
import { createAgent, PaymentFailedError, type AgentOptions, type PaymentEvent } from '../../../libs/agent-sdk/src';

const PRICE = 10_000n; // the site's default, 0.01 USD
const asBot = { headers: { 'user-agent': GPTBOT } };

let site: GatedSite;
let server: SiteServer;
let close: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ site, server, close } = await startVoucherSite());
});
afterAll(() => close?.());

/** What went wrong inside a front (startFront) during a test: each fails the test it happened in. */
const frontFailures: string[] = [];
/** The gated site's last answers to paid requests a front passed on: a step that hangs names them. */
const paidAnswers: string[] = [];
afterEach(() => expect(frontFailures.splice(0)).toEqual([]));

/**
 * What the front does with a request carrying a payment: pass it on, answer 402 (bare, or saying the
 * voucher is above the channel's balance), 404, 429, 502 or a bare 200 ("maintenance": no settlement header, no token) itself, or pass it on and answer 502, 404
 * or that 200, or 502 with the gate's settlement header kept (its page and token dropped), or pass
 * on the gate's answer with its token dropped or replaced by an unsigned forgery naming the page's
 * gate and path (its settlement header kept, or dropped too; or living a week, or expired as issued).
 */
type FrontAction =
  | 'forward'
  | 'refuse402'
  | 'refuse402AboveBalance'
  | 'refuse404'
  | 'refuse429'
  | 'refuse502'
  | 'refuse200'
  | 'forwardThen502'
  | 'forwardThen404'
  | 'forwardThen200'
  | 'forwardThen502WithSettlement'
  | 'forwardThen502WithSettlementAndForgedToken'
  | 'forwardThen200WithSettlement'
  | 'forwardStrippingToken'
  | 'forwardForgingToken'
  | 'forwardForgingTokenWithoutSettlement'
  | 'forwardForgingLongLivedToken'
  | 'forwardForgingExpiredToken';

/**
 * A front server on loopback before the gated site. `act` decides for each request carrying a
 * PAYMENT-SIGNATURE (given the header and how many came before it); others pass through. The
 * front's own 429s and 502s say `Retry-After: <retryAfter>` (0 by default: the agent resends at
 * once, and the suite does not wait out a second per resend), or nothing when it is null.
 */
async function startFront(
  act: (header: string, index: number) => FrontAction,
  { retryAfter = '0' }: { retryAfter?: string | null } = {},
) {
  const retryHeaders = retryAfter === null ? {} : { 'retry-after': retryAfter };
  const paid: string[] = [];
  const forwardedPaid: string[] = [];
  /** Schemes the front takes out of the gate's 402s (v1 body and v2 header), as a hostile front may. */
  const hidden = new Set<string>();
  /** Whether the front answers the proofs posted to verify_url itself, 500 (the 402s then name it there). */
  let verifyFails = false;
  /** A body the front answers 200 to every post to verify_url with, standing in for the API. */
  let verifyStandIn: ((gateRef: string | undefined) => unknown) | undefined;
  /** Whether the gate's 402s reach the agent with their verify_url (on the front), or without. */
  let verifyUrlShown = true;
  /** Whether the gate's 402s reach the agent with their x402 v2 offers (PAYMENT-REQUIRED), or v1's only. */
  let v2Shown = true;
  /** How the front maps a request's path onto the site's (an honest proxy stripping a prefix, say). */
  let sitePath = (path: string) => path;
  /** Every access token the front saw go by (in a page's answer or a verify_url's), by the path it names. */
  const tokens = new Map<string, string>();
  const keepToken = (token: unknown) => {
    const path = typeof token === 'string' ? peekAccessTokenPayload(token)?.url : undefined;
    if (path) tokens.set(path, token as string);
  };
  // A failure of the front's own (its upstream fetch, a parse) answers 502 naming it and fails the
  // test after it, where an unanswered request would leave the agent waiting out its timeouts.
  const front = createServer((request, response) => {
    answer(request, response).catch((error: unknown) => {
      frontFailures.push(`${request.method} ${request.url}: ${String(error)}`);
      if (response.headersSent) response.destroy();
      else response.writeHead(502, { 'content-type': 'text/plain' }).end(`front failed: ${String(error)}`);
    });
  });
  async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (request.method === 'POST' && VERIFY_PATH.test(request.url ?? '')) {
      if (verifyFails) return void response.writeHead(500, { 'content-type': 'text/plain' }).end('down');
      if (verifyStandIn)
        return void response
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify(verifyStandIn(gateRefOfVerifyPath(request.url))));
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const upstream = await fetch(`${site.app.baseUrl}${request.url}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: Buffer.concat(chunks),
      });
      const text = await upstream.text();
      if (upstream.ok) keepToken((JSON.parse(text) as { access_token?: unknown }).access_token);
      return void response.writeHead(upstream.status, { 'content-type': 'application/json' }).end(text);
    }
    const header = request.headers['payment-signature'] ?? request.headers['x-payment'];
    const action = typeof header === 'string' ? act(header, paid.push(header) - 1) : 'forward';
    if (action === 'refuse200')
      return void response.writeHead(200, { 'content-type': 'text/plain' }).end('maintenance');
    if (action === 'refuse402' || action === 'refuse402AboveBalance') {
      const refusal =
        action === 'refuse402' ? {} : { reason: BATCH_REASONS.cumulativeExceedsBalance, detail: 'deposit more' };
      response.writeHead(402, { 'content-type': 'application/json' }).end(JSON.stringify(refusal));
      return;
    }
    if (action === 'refuse404' || action === 'refuse429' || action === 'refuse502') {
      const [status, text] = {
        refuse404: [404, 'Not Found'] as const,
        refuse429: [429, 'Too Many Requests'] as const,
        refuse502: [502, 'Bad Gateway'] as const,
      }[action];
      response.writeHead(status, { 'content-type': 'text/plain', ...retryHeaders }).end(text);
      return;
    }
    if (typeof header === 'string') forwardedPaid.push(header);
    const upstream = await fetch(`${server.url}${sitePath(request.url ?? '/')}`, {
      headers: forwardedHeaders(request.headers),
    });
    let body = await upstream.text();
    keepToken(upstream.headers.get('x-crawlgate-token'));
    if (typeof header === 'string') {
      const retry = upstream.headers.get('retry-after');
      const said = upstream.status === 200 ? '' : ` ${body.slice(0, 160)}`;
      paidAnswers.push(`${upstream.status} ${request.url}${retry === null ? '' : ` retry-after ${retry}`}${said}`);
      paidAnswers.splice(0, paidAnswers.length - 8);
    }
    if (action === 'forwardThen200')
      return void response.writeHead(200, { 'content-type': 'text/plain' }).end('maintenance');
    if (action.startsWith('forwardThen') && action.includes('WithSettlement')) {
      const settlement = upstream.headers.get('payment-response');
      // A token with the gate's own payload (its ref, the page) and a MAC the front made up.
      const real = upstream.headers.get('x-crawlgate-token');
      const forged = real && action.endsWith('ForgedToken') ? `${real.split('.')[0]}.${'A'.repeat(43)}` : null;
      const headers = {
        'content-type': 'text/plain',
        ...retryHeaders,
        ...(settlement && { 'payment-response': settlement }),
        ...(forged && { 'x-crawlgate-token': forged }),
      };
      const [status, text] = action.startsWith('forwardThen200') ? [200, 'maintenance'] : [502, 'Bad Gateway'];
      return void response.writeHead(status, headers).end(text);
    }
    if (action === 'forwardThen502' || action === 'forwardThen404') {
      const [status, text] = action === 'forwardThen502' ? [502, 'Bad Gateway'] : [404, 'Not Found'];
      response.writeHead(status, { 'content-type': 'text/plain', ...retryHeaders }).end(text);
      return;
    }
    const headers = new Headers(upstream.headers);
    headers.delete('content-length');
    headers.delete('content-encoding');
    if (upstream.status === 402 && hidden.size > 0) body = withoutHiddenOffers(headers, body, hidden);
    if (upstream.status === 402 && !v2Shown) headers.delete('payment-required');
    if (upstream.status === 402) body = withVerifyThrough(body, verifyUrlShown ? frontUrl : undefined);
    if (upstream.status !== 402) tamperWithToken(headers, action);
    response.writeHead(upstream.status, Object.fromEntries(headers)).end(body);
  }
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const frontUrl = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
  return {
    url: frontUrl,
    /** Every PAYMENT-SIGNATURE the front was sent, and those it passed on to the gated site. */
    paid,
    forwardedPaid,
    /** From now on the gate's 402s reach the agent without this scheme's offers. */
    hide: (scheme: string) => void hidden.add(scheme),
    show: (scheme: string) => void hidden.delete(scheme),
    /** Whether the proofs posted to verify_url (which the front's 402s name on the front) fail 500, or pass on. */
    failVerify: (fails: boolean) => void (verifyFails = fails),
    /** From now on the front answers every post to verify_url 200 with `body()` itself (undefined: passes them on). */
    standInForVerify: (body: ((gateRef: string | undefined) => unknown) | undefined) => void (verifyStandIn = body),
    /** From now on the front answers every post to verify_url with the token it saw for `path`, forged to live `lifeSeconds` from its issue. */
    standInWithForgedLife(path: string, lifeSeconds: number) {
      const real = peekAccessTokenPayload(tokens.get(path)!)!;
      verifyStandIn = () => ({ access_token: forgedToken({ ...real, exp: real.iat + lifeSeconds }) });
    },
    /** From now on the gate's 402s reach the agent without their verify_url. */
    dropVerifyUrl: () => void (verifyUrlShown = false),
    /** From now on the gate's 402s reach the agent with x402 v1's offers only, which name no gate. */
    dropV2: () => void (v2Shown = false),
    /** From now on the front passes requests on to the site at `map(path)`. */
    mapPaths: (map: (path: string) => string) => void (sitePath = map),
    /** The access token the front saw for `path` (the site's, as its API or gate issued it). */
    tokenOf: (path: string) => tokens.get(path),
    close: () => new Promise((resolve) => front.close(resolve)),
  };
}

/** What a hostile front does to the token of a paid answer it passes on: drops it, or forges one in its place. */
function tamperWithToken(headers: Headers, action: FrontAction): void {
  const token = headers.get('x-crawlgate-token');
  if (action === 'forwardStrippingToken') headers.delete('x-crawlgate-token');
  if ((action === 'forwardForgingLongLivedToken' || action === 'forwardForgingExpiredToken') && token) {
    const payload = peekAccessTokenPayload(token)!;
    const life = action === 'forwardForgingExpiredToken' ? 0 : 7 * 24 * 3600;
    const forged = { ...payload, exp: payload.iat + life };
    headers.set('x-crawlgate-token', forgedToken(forged));
  }
  if (action !== 'forwardForgingToken' && action !== 'forwardForgingTokenWithoutSettlement') return;
  if (token) headers.set('x-crawlgate-token', unsignedForgeryOf(token));
  if (action === 'forwardForgingTokenWithoutSettlement') headers.delete('payment-response');
}

/** A token naming the same gate and path as `token`, with a MAC of the right length the gate refuses: the agent cannot tell. */
function unsignedForgeryOf(token: string): string {
  const { url, gate_id } = peekAccessTokenPayload(token)!;
  const [payload, mac] = forgedFor(token, url, gate_id).split('.');
  return `${payload}.${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`;
}

type Offers = { accepts?: { scheme?: string }[] };

/** A gate's verify_url path: the front's 402s name it on the front, which passes it on to the API (or fails it). */
const VERIFY_PATH = /^\/v1\/gates\/[^/]+\/verify$/;

/** The 402's body with its verify_url on the front (`frontUrl`), or without one. */
function withVerifyThrough(body: string, frontUrl: string | undefined): string {
  const offer = JSON.parse(body) as { verify_url?: string };
  if (typeof offer.verify_url === 'string')
    offer.verify_url = frontUrl === undefined ? undefined : frontUrl + new URL(offer.verify_url).pathname;
  return JSON.stringify(offer);
}

function withoutHiddenOffers(headers: Headers, body: string, hidden: Set<string>): string {
  const keep = (offers: Offers) => ({ ...offers, accepts: offers.accepts?.filter((one) => !hidden.has(one.scheme!)) });
  const v2 = headers.get('payment-required');
  if (v2) headers.set('payment-required', encodeBase64Json(keep(decodeBase64Json(v2) as Offers)));
  return JSON.stringify(keep(JSON.parse(body) as Offers));
}

const forwardedHeaders = (headers: IncomingHttpHeaders) =>
  Object.fromEntries(
    Object.entries(headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name)),
  ) as Record<string, string>;

/**
 * A front that passes the `index`th paid request's payment to the gate, which charges it, then
 * answers 502 (or 404); every later send of that payment is answered the same until recover(),
 * then `afterwards` (passed on, or a bare 402). Other requests pass.
 */
async function startLosingFront(
  index: number,
  afterwards: 'forward' | 'refuse402' = 'forward',
  status = 502,
  options?: Parameters<typeof startFront>[1],
) {
  let lost: string | undefined;
  let down = true;
  const front = await startFront((header, at) => {
    if (at === index) {
      lost = header;
      return status === 404 ? 'forwardThen404' : 'forwardThen502';
    }
    if (header !== lost) return 'forward';
    if (down) return status === 404 ? 'refuse404' : 'refuse502';
    return afterwards;
  }, options);
  return Object.assign(front, {
    /** The voucher the gate charged and the front lost. */
    lost: () => lost,
    recover: () => void (down = false),
  });
}

/**
 * `work`, or a failure naming `step` past `ms` (under a test's 60 s): a hang says where it was. A
 * CI run once had a test here time out whole, telling nothing more.
 */
const step = <T>(name: string, work: Promise<T>, ms = 40_000): Promise<T> =>
  withinDeadline(work, ms).catch((error: unknown) => {
    if (!(error instanceof DeadlineError)) throw error;
    const answers = paidAnswers.length ? paidAnswers.join(' | ') : 'none';
    throw new Error(`${name}: ${error.message}; the site's last answers to paid requests: ${answers}`);
  });

/** An agent paying by voucher, with a deposit of 1.5 USD; `payMode: 'transfer'` pays exact offers by transfer (its wallet given gas). */
/** An agent paying with vouchers (1.5 USD deposits), on a new funded wallet, or on `wallet` as it is. */
async function voucherAgent({
  payMode,
  wallet: given,
  channelFile,
}: Pick<AgentOptions, 'payMode'> & { wallet?: ReturnType<typeof newWallet>; channelFile?: string } = {}) {
  const wallet = given ?? newWallet();
  if (!given) await step('funding the agent', fundUsdc(site.app, wallet.address, '2'));
  if (payMode === 'transfer') await fundEth(site.app, wallet.address);
  const events: PaymentEvent[] = [];
  const agent = createAgent({
    account: wallet,
    maxPriceUsd: '0.05',
    budgetUsd: '2',
    networks: [{ network: 'local', asset: site.app.chain.usdc }],
    rpcUrl: site.app.chain.rpcUrl,
    pollingIntervalMs: 20,
    batchSettlement: { depositUsd: '1.5', channelFile },
    onPayment: (event) => events.push(event),
    payMode,
  });
  return { agent, events, wallet };
}

const depositsOf = (channelId: `0x${string}`) => depositsOfSite(site, channelId);

/** The API's payments of a channel, as [path, cumulative total], and the total it says it charged. */
async function apiSide(channelId: string) {
  const { prisma } = site.app.database;
  const rows = await prisma.payment.findMany({ where: { channelId }, orderBy: { cumulativeAmount: 'asc' } });
  const channel = await prisma.paymentChannel.findUnique({ where: { channelId } });
  return { payments: rows.map((row) => [row.url, row.cumulativeAmount]), charged: channel?.charged };
}

/** A page's status and body, or the reason its payment failed. */
async function fetchPage(agent: Awaited<ReturnType<typeof voucherAgent>>['agent'], url: string) {
  try {
    return await step(
      `fetching ${url}`,
      agent.fetch(url, asBot).then(async (response) => ({ status: response.status, body: await response.text() })),
    );
  } catch (error) {
    if (error instanceof PaymentFailedError) return { reason: error.reason };
    throw error;
  }
}

const served = (id: string) => ({ status: 200, body: page(id) });

it('a 429 in front of the gate on the first paid retry: the voucher is resent, the page arrives, and later pages pay on the same channel', async () => {
  // The first paid request of the second page is answered by the front: the voucher never reaches the gate.
  // A 429 that names no wait: the agent waits its default second.
  const front = await startFront((_header, index) => (index === 1 ? 'refuse429' : 'forward'), { retryAfter: null });
  try {
    const { agent, events } = await voucherAgent();
    const url = (i: number) => `${front.url}/articles/front429-${i}`;
    const outcomes = [];
    for (const i of [1, 2, 3, 4]) outcomes.push(await fetchPage(agent, url(i)));
    expect(outcomes).toEqual([1, 2, 3, 4].map((i) => served(`front429-${i}`)));
    expect(front.paid[2]).toBe(front.paid[1]); // the same header again
    const [channel] = agent.channels();
    expect(await depositsOf(channel.channelId)).toHaveLength(1);
    expect(await apiSide(channel.channelId)).toEqual({
      payments: [1, 2, 3, 4].map((i) => [`/articles/front429-${i}`, BigInt(i) * PRICE]),
      charged: 4n * PRICE,
    });
    expect(channel).toMatchObject({ charged: 4n * PRICE, deposited: 1_500_000n });
    expect(events).toHaveLength(4);
    expect(agent.spent()).toMatchObject({ usd: '1.5', payments: 1 });
  } finally {
    await front.close();
  }
});

it('a front saying falsely that a voucher of a funded channel is above its balance: the agent reads the escrow, deposits nothing, and passes the refusal on; the next page pays on the same channel', async () => {
  const front = await startFront((_header, index) => (index === 1 ? 'refuse402AboveBalance' : 'forward'));
  try {
    const { agent } = await voucherAgent();
    const url = (i: number) => `${front.url}/articles/false-balance-${i}`;
    expect(await fetchPage(agent, url(1))).toEqual(served('false-balance-1'));
    const [channel] = agent.channels();
    expect(await fetchPage(agent, url(2))).toEqual({ reason: BATCH_REASONS.cumulativeExceedsBalance });
    expect(agent.channels()).toEqual([expect.objectContaining({ deposited: 1_500_000n, charged: PRICE })]);
    expect(await fetchPage(agent, url(3))).toEqual(served('false-balance-3'));
    expect(await depositsOf(channel.channelId)).toHaveLength(1);
    expect(await apiSide(channel.channelId)).toEqual({
      payments: [
        ['/articles/false-balance-1', PRICE],
        ['/articles/false-balance-3', 2n * PRICE],
      ],
      charged: 2n * PRICE,
    });
    expect(agent.spent()).toMatchObject({ usd: '1.5', payments: 1 });
  } finally {
    await front.close();
  }
});

it('a 429 that never lets the voucher through: that page fails unconfirmed, and the next pages pay on the same channel with no new deposit', async () => {
  let blocked: string | undefined;
  // Every request carrying the second page's voucher is answered 429 by the front.
  const front = await startFront((header, index) => {
    if (index === 1) blocked = header;
    return header === blocked ? 'refuse429' : 'forward';
  });
  try {
    const { agent, events } = await voucherAgent();
    const url = (i: number) => `${front.url}/articles/stuck429-${i}`;
    const outcomes = [];
    for (const i of [1, 2]) outcomes.push(await fetchPage(agent, url(i)));
    // Not counted as charged: the next page's voucher is for the same total, and the gate takes it.
    const chargedAfterFailure = agent.channels()[0].charged;
    for (const i of [3, 4]) outcomes.push(await fetchPage(agent, url(i)));
    expect(outcomes).toEqual([
      served('stuck429-1'),
      { reason: 'payment_unconfirmed' },
      served('stuck429-3'),
      served('stuck429-4'),
    ]);
    expect(chargedAfterFailure).toBe(PRICE);
    expect(front.paid.filter((header) => header === blocked).length).toBeGreaterThan(1); // resent, bounded
    expect(front.forwardedPaid).not.toContain(blocked);
    const [channel] = agent.channels();
    expect(await depositsOf(channel.channelId)).toHaveLength(1);
    expect(await apiSide(channel.channelId)).toEqual({
      payments: [
        ['/articles/stuck429-1', PRICE],
        ['/articles/stuck429-3', 2n * PRICE],
        ['/articles/stuck429-4', 3n * PRICE],
      ],
      charged: 3n * PRICE,
    });
    expect(channel).toMatchObject({ charged: 3n * PRICE, deposited: 1_500_000n });
    expect(events.map((event) => event.url)).toEqual([url(1), url(3), url(4)]);
    expect(agent.spent()).toMatchObject({ usd: '1.5', payments: 1 });
    // The second page's lost voucher was for the total the third page's voucher was charged at: the
    // gate takes each total once, so it was not charged, and that page is paid anew (not held).
    const blockedSends = front.paid.filter((header) => header === blocked).length;
    expect(await fetchPage(agent, url(2))).toEqual(served('stuck429-2'));
    expect(await apiSide(channel.channelId)).toMatchObject({ charged: 4n * PRICE });
    expect(front.paid.filter((header) => header === blocked)).toHaveLength(blockedSends); // not sent again
  } finally {
    await front.close();
  }
}, 60_000);

it('a 502 from the front after the gate charged: the same voucher is resent, the page arrives with its token, and nothing is paid twice', async () => {
  const front = await startFront((_header, index) => (index === 1 ? 'forwardThen502' : 'forward'));
  try {
    const { agent, events } = await voucherAgent();
    const url = (i: number) => `${front.url}/articles/front502-${i}`;
    expect([await fetchPage(agent, url(1)), await fetchPage(agent, url(2))]).toEqual([
      served('front502-1'),
      served('front502-2'),
    ]);
    // The gate got the voucher twice, the same header: the API answered the second as it had the first.
    expect(front.forwardedPaid).toHaveLength(3);
    expect(front.forwardedPaid[2]).toBe(front.forwardedPaid[1]);
    const [channel] = agent.channels();
    expect(await apiSide(channel.channelId)).toEqual({
      payments: [1, 2].map((i) => [`/articles/front502-${i}`, BigInt(i) * PRICE]),
      charged: 2n * PRICE,
    });
    expect(channel).toMatchObject({ charged: 2n * PRICE });
    // The page's token was kept: read again, no new voucher.
    expect(await fetchPage(agent, url(2))).toEqual(served('front502-2'));
    expect(front.paid).toHaveLength(3);
    // The next page pays the next total on the same channel.
    expect(await fetchPage(agent, url(3))).toEqual(served('front502-3'));
    expect(await apiSide(channel.channelId)).toMatchObject({ charged: 3n * PRICE });
    expect(agent.channels()[0]).toMatchObject({ charged: 3n * PRICE });
    expect(await depositsOf(channel.channelId)).toHaveLength(1);
    expect(events.map((event) => event.url)).toEqual([url(1), url(2), url(3)]);
  } finally {
    await front.close();
  }
});

it('a front down for every resend of a voucher the gate charged: the next fetch of the page sends that voucher again and reads the page, paying it once', async () => {
  const front = await startLosingFront(0);
  try {
    const { agent, events } = await voucherAgent();
    const url = (i: number) => `${front.url}/articles/outage-${i}`;
    expect(await fetchPage(agent, url(1))).toEqual({ reason: 'payment_unconfirmed' });
    front.recover();
    expect(await fetchPage(agent, url(1))).toEqual(served('outage-1'));
    expect(front.forwardedPaid.at(-1)).toBe(front.lost()); // that very voucher, for its gate
    const [channel] = agent.channels();
    expect(await apiSide(channel.channelId)).toEqual({ payments: [['/articles/outage-1', PRICE]], charged: PRICE });
    expect(channel).toMatchObject({ charged: PRICE });
    // Reported paid once, when it was learned; the next page pays the next total.
    expect(await fetchPage(agent, url(2))).toEqual(served('outage-2'));
    expect(await apiSide(channel.channelId)).toMatchObject({ charged: 2n * PRICE });
    expect(events.map((event) => event.url)).toEqual([url(1), url(2)]);
  } finally {
    await front.close();
  }
}, 60_000);

it('a page whose voucher was lost is paid no other way, though its 402 then offers exact payment only: that voucher is sent again', async () => {
  const front = await startLosingFront(0);
  try {
    const { agent, events } = await voucherAgent();
    const url = `${front.url}/articles/switched`;
    expect(await fetchPage(agent, url)).toEqual({ reason: 'payment_unconfirmed' });
    front.hide('batch-settlement');
    expect(await fetchPage(agent, url)).toEqual({ reason: 'payment_unconfirmed' });
    front.recover();
    expect(await fetchPage(agent, url)).toEqual(served('switched'));
    const paid = await site.app.database.prisma.payment.findMany({ where: { url: '/articles/switched' } });
    expect(paid.map((payment) => payment.method)).toEqual(['voucher']);
    expect(events.map((event) => event.url)).toEqual([url]);
  } finally {
    await front.close();
  }
}, 60_000);

it('fetches made at once of a page whose voucher is lost fail with one round of its resends, not one each', async () => {
  // A second between resends: the later fetches start while the first one's round is still going.
  const front = await startLosingFront(0, 'forward', 502, { retryAfter: '1' });
  try {
    const { agent } = await voucherAgent();
    const url = `${front.url}/articles/crowd`;
    expect(await fetchPage(agent, url)).toEqual({ reason: 'payment_unconfirmed' });
    const resends = () => front.paid.filter((header) => header === front.lost()).length;
    const round = resends() - 1; // the first send, then one round of resends
    const before = resends();
    const answers = await Promise.all([1, 2, 3].map(() => fetchPage(agent, url)));
    expect(answers).toEqual([1, 2, 3].map(() => ({ reason: 'payment_unconfirmed' })));
    expect(resends() - before).toBeLessThanOrEqual(round + 1);
  } finally {
    await front.close();
  }
}, 60_000);

it('a front answering its own 404 to a voucher the gate charged, and to its resends: the page is paid no other way', async () => {
  const front = await startLosingFront(0, 'forward', 404);
  try {
    const { agent } = await voucherAgent();
    const url = `${front.url}/articles/notfound`;
    const notFound = { status: 404, body: 'Not Found' };
    expect(await fetchPage(agent, url)).toEqual(notFound);
    front.hide('batch-settlement');
    expect(await fetchPage(agent, url)).toEqual(notFound);
    front.recover();
    expect(await fetchPage(agent, url)).toEqual(served('notfound'));
    const paid = await site.app.database.prisma.payment.findMany({ where: { url: '/articles/notfound' } });
    expect(paid.map((payment) => payment.method)).toEqual(['voucher']);
  } finally {
    await front.close();
  }
}, 60_000);

it('a front answering its own 404 to an exact payment the gate settled: the agent asks verify_url for its token and reads the page, paying once', async () => {
  const front = await startLosingFront(0, 'forward', 404);
  try {
    front.hide('batch-settlement');
    const { agent } = await voucherAgent();
    const url = `${front.url}/articles/settled404`;
    expect(await fetchPage(agent, url)).toEqual(served('settled404'));
    expect(await fetchPage(agent, url)).toEqual(served('settled404'));
    const paid = await site.app.database.prisma.payment.findMany({ where: { url: '/articles/settled404' } });
    expect(paid.map((payment) => payment.method)).toEqual(['authorization']);
  } finally {
    await front.close();
  }
}, 60_000);

it('a page whose transfer is unproven is paid no other way, though its 402 then offers vouchers only: its proof is posted again', async () => {
  const front = await startFront(() => 'forward');
  try {
    const { agent } = await voucherAgent({ payMode: 'transfer' });
    const url = `${front.url}/articles/unproven`;
    front.hide('batch-settlement');
    front.failVerify(true);
    expect(await fetchPage(agent, url)).toEqual({ reason: 'verify_500' });
    front.show('batch-settlement');
    front.hide('exact');
    expect(await fetchPage(agent, url)).toEqual({ reason: 'transfer_unproven' });
    front.failVerify(false);
    expect(await fetchPage(agent, url)).toEqual(served('unproven'));
    const paid = await site.app.database.prisma.payment.findMany({ where: { url: '/articles/unproven' } });
    expect(paid.map((payment) => payment.method)).toEqual(['transfer']);
    expect(agent.channels()).toEqual([]);
  } finally {
    await front.close();
  }
}, 60_000);

it('a front that answers a bare 402 to a voucher the gate charged, sent again: the page is not paid a second time', async () => {
  const front = await startLosingFront(0, 'refuse402');
  try {
    const { agent } = await voucherAgent();
    const url = `${front.url}/articles/bare402`;
    expect(await fetchPage(agent, url)).toEqual({ reason: 'payment_unconfirmed' });
    front.recover();
    expect(await fetchPage(agent, url)).toEqual({ reason: 'payment_unconfirmed' });
    const [channel] = agent.channels();
    expect(await apiSide(channel.channelId)).toEqual({ payments: [['/articles/bare402', PRICE]], charged: PRICE });
  } finally {
    await front.close();
  }
}, 60_000);

it('a lost voucher of a channel withdrawn since: the new channel’s charges do not let it go, and sent again it reads its page on its own channel', async () => {
  const front = await startLosingFront(1);
  try {
    const { agent, wallet } = await voucherAgent();
    const url = (name: string) => `${front.url}/articles/withdrawn-${name}`;
    expect(await fetchPage(agent, url('first'))).toEqual(served('withdrawn-first'));
    expect(await fetchPage(agent, url('lost'))).toEqual({ reason: 'payment_unconfirmed' });
    const [old] = agent.channels();
    await fundEth(site.app, wallet.address);
    await agent.initiateWithdraw();
    // A new channel on the same terms, charged past the lost voucher's total.
    for (const name of ['b1', 'b2', 'b3'])
      expect(await fetchPage(agent, url(name))).toEqual(served(`withdrawn-${name}`));
    front.recover();
    expect(await fetchPage(agent, url('lost'))).toEqual(served('withdrawn-lost'));
    const paid = await site.app.database.prisma.payment.findMany({ where: { url: '/articles/withdrawn-lost' } });
    expect(paid.map((payment) => payment.channelId)).toEqual([old.channelId]);
    // The new channel's count is its own: its next page pays on.
    expect(await fetchPage(agent, url('b4'))).toEqual(served('withdrawn-b4'));
  } finally {
    await front.close();
  }
}, 90_000);

/** How the API says a page was paid, each payment as [method, cumulative total (vouchers) or null]. */
async function paymentsFor(path: string) {
  const rows = await site.app.database.prisma.payment.findMany({ where: { url: path }, orderBy: { createdAt: 'asc' } });
  return rows.map((row) => [row.method, row.cumulativeAmount]);
}

/** `token` with its payload's path and gate changed to `path`'s: a site's token no longer, its MAC the old one's. */
function forgedFor(token: string, path: string, gateRef: string | undefined): string {
  const [, mac] = token.split('.');
  const payload = { ...peekAccessTokenPayload(token), url: path, gate_id: gateRef };
  return `${base64urlEncodeUtf8(JSON.stringify(payload))}.${mac}`;
}

/** The ref of the gate a verify_url path (`/v1/gates/{id}/verify`) posts to: what its tokens name as their gate. */
function gateRefOfVerifyPath(path: string | undefined): string | undefined {
  const id = /^\/v1\/gates\/([^/]+)\/verify$/.exec(path ?? '')?.[1];
  return id ? readGate(decodeURIComponent(id))?.ref : undefined;
}

it('a front answering a bare 200 (no settlement, no token) to a voucher the gate charged: the caller gets it, and the voucher is sent again before the page is paid any other way', async () => {
  const front = await startFront((_header, index) => (index === 0 ? 'forwardThen200' : 'forward'));
  try {
    const { agent, events } = await voucherAgent();
    const url = `${front.url}/articles/maintenance`;
    expect(await fetchPage(agent, url)).toEqual({ status: 200, body: 'maintenance' });
    front.hide('batch-settlement');
    expect(await fetchPage(agent, url)).toEqual(served('maintenance'));
    expect(await paymentsFor('/articles/maintenance')).toEqual([['voucher', PRICE]]);
    expect(front.forwardedPaid[1]).toBe(front.forwardedPaid[0]); // that very voucher, for its gate
    expect(events.map((event) => event.url)).toEqual([url]);
  } finally {
    await front.close();
  }
}, 60_000);

it('a voucher the gate charged, answered 502 with its settlement but no token: the next fetch reads the page with that voucher sent again, and pays nothing more', async () => {
  const front = await startFront((_header, index) => (index <= 1 ? 'forwardThen502WithSettlement' : 'forward'));
  try {
    const { agent, events } = await voucherAgent();
    const url = `${front.url}/articles/charged-502`;
    expect(await fetchPage(agent, url)).toMatchObject({ status: 502 });
    // Sent again and answered the same way: still the page's, not forgotten.
    expect(await fetchPage(agent, url)).toMatchObject({ status: 502 });
    expect(await fetchPage(agent, url)).toEqual(served('charged-502'));
    expect(await paymentsFor('/articles/charged-502')).toEqual([['voucher', PRICE]]);
    expect(new Set(front.forwardedPaid).size).toBe(1); // that very voucher each time
    expect(events.map((event) => event.url)).toEqual([url]); // reported paid once
  } finally {
    await front.close();
  }
}, 60_000);

it('an honest proxy stripping a prefix, failing once after the gate settled: the token verify_url answers for that gate reads the page, paid once', async () => {
  // The first payment passed on is answered 502; the gate's token names /articles/…, the agent's page /blog/articles/….
  const front = await startFront((_header, index) => (index === 0 ? 'forwardThen502' : 'forward'));
  try {
    front.hide('batch-settlement');
    front.mapPaths((path) => path.replace(/^\/blog\//, '/'));
    const { agent } = await voucherAgent();
    const url = `${front.url}/blog/articles/prefixed`;
    expect(await fetchPage(agent, url)).toEqual(served('prefixed'));
    expect(await fetchPage(agent, url)).toEqual(served('prefixed'));
    expect(await paymentsFor('/articles/prefixed')).toEqual([['authorization', null]]);
  } finally {
    await front.close();
  }
}, 60_000);

it.each([
  [
    'a 502 keeping the settlement, with a token forged on the gate’s payload',
    'forwardThen502WithSettlementAndForgedToken',
  ],
  ['a 200 "maintenance" keeping the settlement, with no token', 'forwardThen200WithSettlement'],
] as const)(
  'a voucher the gate charged, answered %s: the page is read with that voucher sent again, paid once',
  async (_, action) => {
    const front = await startFront((_header, index) => (index === 0 ? action : 'forward'));
    try {
      const { agent, events } = await voucherAgent();
      const url = `${front.url}/articles/${action.length}-kept`;
      expect((await fetchPage(agent, url)) as { status: number }).not.toEqual(served(`${action.length}-kept`));
      expect(await fetchPage(agent, url)).toEqual(served(`${action.length}-kept`));
      expect(await paymentsFor(`/articles/${action.length}-kept`)).toEqual([['voucher', PRICE]]);
      expect(new Set(front.forwardedPaid).size).toBe(1);
      expect(events.map((event) => event.url)).toEqual([url]);
    } finally {
      await front.close();
    }
  },
  60_000,
);

it('a lost voucher sent again and answered a bare 200 by the front: it stays in doubt, and the next fetch sends it again rather than pay the next total', async () => {
  let lost: string | undefined;
  const front = await startFront((header, index) => {
    if (index === 0) lost = header;
    if (index === 0) return 'forwardThen404';
    return header === lost && index === 1 ? 'refuse200' : 'forward';
  });
  try {
    const { agent } = await voucherAgent();
    const url = `${front.url}/articles/maintenance-resent`;
    expect(await fetchPage(agent, url)).toEqual({ status: 404, body: 'Not Found' });
    expect(await fetchPage(agent, url)).toEqual({ status: 200, body: 'maintenance' });
    expect(await fetchPage(agent, url)).toEqual(served('maintenance-resent'));
    expect(await paymentsFor('/articles/maintenance-resent')).toEqual([['voucher', PRICE]]);
    expect(front.paid).toEqual([lost, lost, lost]);
    const [channel] = agent.channels();
    expect(await apiSide(channel.channelId)).toMatchObject({ charged: PRICE });
  } finally {
    await front.close();
  }
}, 60_000);

it("a verify_url standing in with another page's token for an exact payment the gate settled: the token is not taken, and the page is paid no other way", async () => {
  const front = await startLosingFront(1, 'forward', 404);
  try {
    front.hide('batch-settlement');
    const { agent } = await voucherAgent();
    const url = (name: string) => `${front.url}/articles/p2-${name}`;
    expect(await fetchPage(agent, url('b'))).toEqual(served('p2-b'));
    front.standInForVerify(() => ({ access_token: front.tokenOf('/articles/p2-b') }));
    expect(await fetchPage(agent, url('a'))).toEqual({ status: 404, body: 'Not Found' });
    expect(await fetchPage(agent, url('a'))).toEqual({ reason: 'payment_unconfirmed' });
    front.standInForVerify(undefined);
    front.recover();
    expect(await fetchPage(agent, url('a'))).toEqual(served('p2-a'));
    expect(await paymentsFor('/articles/p2-a')).toEqual([['authorization', null]]);
  } finally {
    await front.close();
  }
}, 60_000);

it('a verify_url standing in with a token naming the page that the gate refuses, the payment sent again answered 404: still in doubt, the page is not paid again', async () => {
  const front = await startLosingFront(1, 'forward', 404);
  try {
    front.hide('batch-settlement');
    const { agent } = await voucherAgent();
    const url = (name: string) => `${front.url}/articles/forged-${name}`;
    expect(await fetchPage(agent, url('b'))).toEqual(served('forged-b'));
    front.standInForVerify((gateRef) => ({
      access_token: forgedFor(front.tokenOf('/articles/forged-b')!, '/articles/forged-a', gateRef),
    }));
    const notFound = { status: 404, body: 'Not Found' };
    expect(await fetchPage(agent, url('a'))).toEqual(notFound);
    expect(await fetchPage(agent, url('a'))).toEqual(notFound);
    front.standInForVerify(undefined);
    front.recover();
    expect(await fetchPage(agent, url('a'))).toEqual(served('forged-a'));
    expect(await paymentsFor('/articles/forged-a')).toEqual([['authorization', null]]);
  } finally {
    await front.close();
  }
}, 60_000);

it.each([
  ['an unproven transfer whose proof, posted again,', 'p3', true],
  ['a transfer whose first proof', 'p3first', false],
] as const)(
  "%s is answered with another page's token: it stays unproven, and no second transfer is sent",
  async (_, name, firstProofFails) => {
    const front = await startFront(() => 'forward');
    try {
      front.hide('batch-settlement');
      const { agent } = await voucherAgent({ payMode: 'transfer' });
      const url = (page: string) => `${front.url}/articles/${name}-${page}`;
      expect(await fetchPage(agent, url('b'))).toEqual(served(`${name}-b`));
      if (firstProofFails) {
        front.failVerify(true);
        expect(await fetchPage(agent, url('a'))).toEqual({ reason: 'verify_500' });
        front.failVerify(false);
      }
      front.standInForVerify(() => ({ access_token: front.tokenOf(`/articles/${name}-b`) }));
      expect(await fetchPage(agent, url('a'))).toEqual({ reason: 'transfer_unproven' });
      front.standInForVerify(undefined);
      expect(await fetchPage(agent, url('a'))).toEqual(served(`${name}-a`));
      expect(await paymentsFor(`/articles/${name}-a`)).toEqual([['transfer', null]]);
    } finally {
      await front.close();
    }
  },
  60_000,
);

it('a transfer whose proof is answered with a token naming the page that the gate refuses: it stays unproven, and no second transfer is sent', async () => {
  const front = await startFront(() => 'forward');
  try {
    front.hide('batch-settlement');
    const { agent } = await voucherAgent({ payMode: 'transfer' });
    const url = (name: string) => `${front.url}/articles/forgedtx-${name}`;
    expect(await fetchPage(agent, url('b'))).toEqual(served('forgedtx-b'));
    front.standInForVerify((gateRef) => ({
      access_token: forgedFor(front.tokenOf('/articles/forgedtx-b')!, '/articles/forgedtx-a', gateRef),
    }));
    expect(await fetchPage(agent, url('a'))).toMatchObject({ status: 402 });
    expect(await fetchPage(agent, url('a'))).toMatchObject({ status: 402 });
    front.standInForVerify(undefined);
    expect(await fetchPage(agent, url('a'))).toEqual(served('forgedtx-a'));
    expect(agent.spent()).toMatchObject({ micros: 2n * PRICE, payments: 2 }); // two transfers: one a page
    expect(await paymentsFor('/articles/forgedtx-a')).toEqual([['transfer', null]]);
  } finally {
    await front.close();
  }
}, 60_000);

it('a front answering a bare 200 (no settlement, no token) to an exact payment the gate settled: the agent asks verify_url for its token and reads the page, paying once', async () => {
  const front = await startFront((_header, index) => (index === 0 ? 'forwardThen200' : 'forward'));
  try {
    front.hide('batch-settlement');
    const { agent } = await voucherAgent();
    const url = `${front.url}/articles/settled200`;
    const outcomes = [await fetchPage(agent, url), await fetchPage(agent, url)];
    expect(await paymentsFor('/articles/settled200')).toEqual([['authorization', null]]);
    expect(outcomes).toEqual([served('settled200'), served('settled200')]);
  } finally {
    await front.close();
  }
}, 60_000);

describe.each([
  ['exact', 'authorization'],
  ['voucher', 'voucher'],
] as const)('a hostile front tampering with the token of a %s payment the gate settled', (scheme, method) => {
  it.each(['forwardStrippingToken', 'forwardForgingToken', 'forwardForgingTokenWithoutSettlement'] as const)(
    '%s on every paid answer: later fetches read the page with that payment sent again, never paying twice',
    async (action) => {
      const front = await startFront(() => action);
      try {
        if (scheme === 'exact') front.hide('batch-settlement');
        const { agent, events } = await voucherAgent();
        const name = `tampered-${scheme}-${action}`;
        const url = `${front.url}/articles/${name}`;
        for (let fetches = 0; fetches < 3; fetches++) expect(await fetchPage(agent, url)).toEqual(served(name));
        expect(await paymentsFor(`/articles/${name}`)).toEqual([[method, scheme === 'voucher' ? PRICE : null]]);
        expect(new Set(front.forwardedPaid).size).toBe(1); // that very payment each time
        // Reported once, where the agent saw it settled: a voucher whose settlement the front dropped never was.
        const settlementSeen = scheme === 'exact' || action !== 'forwardForgingTokenWithoutSettlement';
        expect(events.map((event) => event.url)).toEqual(settlementSeen ? [url] : []);
        if (scheme === 'voucher') expect(agent.channels()[0].charged).toBe(settlementSeen ? PRICE : 0n);
        else expect(agent.spent()).toMatchObject({ micros: PRICE, payments: 1 });
      } finally {
        await front.close();
      }
    },
    60_000,
  );
});

it('a front forging the gate’s token on an x402 v1 payment, its 402s stripped of v2 and of their verify_url, then answering the payment sent again 402: never paid twice', async () => {
  const sent = new Set<string>();
  const front = await startFront((header) => {
    if (sent.has(header)) return 'refuse402';
    sent.add(header);
    return 'forwardForgingToken';
  });
  try {
    front.hide('batch-settlement');
    front.dropV2();
    front.dropVerifyUrl();
    const { agent, events } = await voucherAgent();
    const url = `${front.url}/articles/v1-forged`;
    expect(await fetchPage(agent, url)).toEqual(served('v1-forged'));
    // A Crawlgate token came with it: the page was a gate's, whose refusal of its own payment is no new sale.
    expect(await fetchPage(agent, url)).toEqual({ reason: 'payment_unconfirmed' });
    expect(await fetchPage(agent, url)).toEqual({ reason: 'payment_unconfirmed' });
    expect(await paymentsFor('/articles/v1-forged')).toHaveLength(1);
    expect(events.map((event) => event.url)).toEqual([url]);
  } finally {
    await front.close();
  }
}, 60_000);

it.each([
  ['an exact payment', 'exact', true],
  ['a voucher', 'batch-settlement', true],
  ['an exact payment, its 402s stripped of their verify_url', 'exact', false],
  ['a voucher, its 402s stripped of their verify_url', 'batch-settlement', false],
] as const)(
  'a front forging the gate’s token on %s, then answering the payment sent again 402: never paid twice',
  async (_, scheme, shown) => {
    const sent = new Set<string>();
    // The gate's token forged on the way (the next fetch meets a 402); a payment seen before is refused.
    const front = await startFront((header) => {
      if (sent.has(header)) return 'refuse402';
      sent.add(header);
      return 'forwardForgingToken';
    });
    try {
      if (scheme === 'exact') front.hide('batch-settlement');
      if (!shown) front.dropVerifyUrl();
      const { agent, events } = await voucherAgent();
      const name = `refused-again-${scheme}-${shown}`;
      const url = `${front.url}/articles/${name}`;
      expect(await fetchPage(agent, url)).toEqual(served(name));
      // With its verify_url, the gate's API gives the token of that payment; without, the fetch fails rather than pay again.
      expect(await fetchPage(agent, url)).toEqual(shown ? served(name) : { reason: 'payment_unconfirmed' });
      expect(await fetchPage(agent, url)).toEqual(shown ? served(name) : { reason: 'payment_unconfirmed' });
      expect(await paymentsFor(`/articles/${name}`)).toHaveLength(1);
      expect(events.map((event) => event.url)).toEqual([url]);
    } finally {
      await front.close();
    }
  },
  60_000,
);

it('concurrent fetches of a page whose token the gate refuses share one resend of its payment, paying nothing more', async () => {
  // The first paid answer's token forged on the way; the payment sent again passes honestly.
  const front = await startFront((_header, index) => (index === 0 ? 'forwardForgingToken' : 'forward'));
  try {
    front.hide('batch-settlement');
    const { agent, events } = await voucherAgent();
    const url = `${front.url}/articles/shared-resend`;
    expect(await fetchPage(agent, url)).toEqual(served('shared-resend'));
    const outcomes = await Promise.all([1, 2, 3, 4].map(() => fetchPage(agent, url)));
    expect(outcomes).toEqual([1, 2, 3, 4].map(() => served('shared-resend')));
    expect(front.paid).toHaveLength(2); // the payment, and one resend of that very header
    expect(front.paid[1]).toBe(front.paid[0]);
    expect(await paymentsFor('/articles/shared-resend')).toEqual([['authorization', null]]);
    expect(events.map((event) => event.url)).toEqual([url]);
  } finally {
    await front.close();
  }
}, 60_000);

// Last in this file: these move the clock forward (Date.now for the agent, gate and API, and the
// chain's, which goes back only when the file's own chain is reverted at its end).
describe('receipts as the clock moves on', () => {
  let ahead = 0;
  const realNow = Date.now.bind(Date);
  beforeEach(() => jest.spyOn(Date, 'now').mockImplementation(() => realNow() + ahead));
  afterEach(() => jest.restoreAllMocks());
  // A claimer keeps running while the clocks move (the tests' API runs none): its heartbeat, written
  // by the database's clock (PGlite's follows Date.now), stays recent. Else, hours on, vouchers are
  // refused (503, no claimer keeps up) wherever the API reads the heartbeat again (each 5 s).
  const moveClock = async (seconds: number) => {
    ahead += seconds * 1000;
    await increaseTime(site.app.chain.rpcUrl, seconds);
    await site.app.app.get(ClaimerHeartbeatStore).record(0);
  };
  const authorizations = (n: number) => Array.from({ length: n }, () => ['authorization', null]);
  /**
   * A voucher agent whose first voucher for `path` its gate charged, the answer lost by a front
   * (startLosingFront, its resends then answered as `afterwards`), the front recovered since; `test`
   * runs on, and the front is closed after.
   */
  async function afterLostVoucher(
    path: string,
    afterwards: 'forward' | 'refuse402',
    test: (lost: {
      front: Awaited<ReturnType<typeof startLosingFront>>;
      agent: Awaited<ReturnType<typeof voucherAgent>>['agent'];
      events: Awaited<ReturnType<typeof voucherAgent>>['events'];
      url: string;
    }) => Promise<void>,
  ) {
    const front = await startLosingFront(0, afterwards);
    try {
      const { agent, events } = await voucherAgent();
      const url = `${front.url}${path}`;
      expect(await fetchPage(agent, url)).toEqual({ reason: 'payment_unconfirmed' });
      front.recover();
      await test({ front, agent, events, url });
    } finally {
      await front.close();
    }
  }

  it('a payment whose answer was lost, its token asked for 20 minutes later: the page is paid anew once that token expires, 30 minutes after the payment, not refused until 30 minutes after the asking', async () => {
    const front = await startLosingFront(0);
    try {
      front.hide('batch-settlement');
      front.failVerify(true);
      const { agent } = await voucherAgent();
      const url = `${front.url}/articles/asked-late`;
      expect(await fetchPage(agent, url)).toMatchObject({ status: 502 });
      front.recover();
      front.failVerify(false);
      await moveClock(20 * 60);
      expect(await fetchPage(agent, url)).toEqual(served('asked-late'));
      expect(await paymentsFor('/articles/asked-late')).toEqual(authorizations(1));
      await moveClock(10 * 60 + 10);
      expect(await fetchPage(agent, url)).toEqual(served('asked-late'));
      expect(await paymentsFor('/articles/asked-late')).toEqual(authorizations(2));
    } finally {
      await front.close();
    }
  }, 60_000);

  it('a settled answer whose token a front stripped while verify_url failed: the page is paid anew 30 minutes on, not refused for a week', async () => {
    const front = await startFront((_header, index) => (index === 0 ? 'forwardStrippingToken' : 'forward'));
    try {
      front.hide('batch-settlement');
      front.failVerify(true);
      const { agent } = await voucherAgent();
      const url = `${front.url}/articles/stripped-once`;
      expect(await fetchPage(agent, url)).toEqual(served('stripped-once'));
      front.failVerify(false);
      await moveClock(31 * 60);
      expect(await fetchPage(agent, url)).toEqual(served('stripped-once'));
      expect(await paymentsFor('/articles/stripped-once')).toEqual(authorizations(2));
    } finally {
      await front.close();
    }
  }, 60_000);

  it('a front answering the payment sent again with a forged week-long token: the page is still paid anew once the real one expired', async () => {
    const front = await startFront((_header, index) =>
      index === 0 ? 'forwardForgingToken' : index === 1 ? 'forwardForgingLongLivedToken' : 'forward',
    );
    try {
      front.hide('batch-settlement');
      const { agent } = await voucherAgent();
      const url = `${front.url}/articles/week-long`;
      expect(await fetchPage(agent, url)).toEqual(served('week-long'));
      expect(await fetchPage(agent, url)).toEqual(served('week-long')); // the payment sent again
      expect(front.paid[1]).toBe(front.paid[0]);
      await moveClock(31 * 60);
      expect(await fetchPage(agent, url)).toEqual(served('week-long'));
      expect(await paymentsFor('/articles/week-long')).toEqual(authorizations(2));
    } finally {
      await front.close();
    }
  }, 60_000);

  it('a front forging a week-long token on the paid answer only: once the real one expired, the page is paid anew, not refused for a week', async () => {
    const front = await startFront((_header, index) => (index === 0 ? 'forwardForgingLongLivedToken' : 'forward'));
    try {
      front.hide('batch-settlement');
      const { agent } = await voucherAgent();
      const url = `${front.url}/articles/week-long-first`;
      expect(await fetchPage(agent, url)).toEqual(served('week-long-first'));
      await moveClock(31 * 60);
      expect(await fetchPage(agent, url)).toEqual(served('week-long-first'));
      expect(await paymentsFor('/articles/week-long-first')).toEqual(authorizations(2));
    } finally {
      await front.close();
    }
  }, 60_000);

  it('a front forging an expired token on the paid answer: a minute on, the payment sent again reads the page, not a new one', async () => {
    const front = await startFront((_header, index) => (index === 0 ? 'forwardForgingExpiredToken' : 'forward'));
    try {
      front.hide('batch-settlement');
      const { agent } = await voucherAgent();
      const url = `${front.url}/articles/expired-forgery`;
      expect(await fetchPage(agent, url)).toEqual(served('expired-forgery'));
      await moveClock(61);
      expect(await fetchPage(agent, url)).toEqual(served('expired-forgery'));
      expect(front.paid[1]).toBe(front.paid[0]); // that very payment, sent again
      expect(await paymentsFor('/articles/expired-forgery')).toEqual(authorizations(1));
    } finally {
      await front.close();
    }
  }, 60_000);

  it.each([
    ['', false],
    [' and verify_url', true],
  ])(
    'a front forging an expired token on every paid answer and failing the payment sent again%s: minute after minute the page is paid once',
    async (_name, verifyFails) => {
      let honest = false;
      const front = await startFront((_header, index) =>
        honest ? 'forward' : index % 2 === 0 ? 'forwardForgingExpiredToken' : 'refuse502',
      );
      try {
        front.hide('batch-settlement');
        front.failVerify(verifyFails);
        const { agent } = await voucherAgent();
        const url = `${front.url}/articles/minutely${verifyFails ? '-verify' : ''}`;
        const outcomes = [await fetchPage(agent, url)];
        for (let minute = 1; minute <= 3; minute++) {
          await moveClock(61);
          outcomes.push(await fetchPage(agent, url));
        }
        // The page is read each minute, or (verify_url failing too) refused, never bought again.
        expect(outcomes[0]).toEqual(served(`minutely${verifyFails ? '-verify' : ''}`));
        if (!verifyFails) expect(outcomes.slice(1)).toEqual([1, 2, 3].map(() => served('minutely')));
        expect(new Set(front.paid).size).toBe(1);
        expect(await paymentsFor(`/articles/minutely${verifyFails ? '-verify' : ''}`)).toEqual(authorizations(1));
        if (!verifyFails) return;
        // With no word from verify_url, a token's default life from the payment: then paid anew.
        honest = true;
        await moveClock(28 * 60);
        expect(await fetchPage(agent, url)).toEqual(served('minutely-verify'));
        expect(await paymentsFor('/articles/minutely-verify')).toEqual(authorizations(2));
      } finally {
        await front.close();
      }
    },
    60_000,
  );

  it('x402 v1 payments (the 402s stripped of their v2 offers): a page read again after its token expired is paid anew, not refused for a week', async () => {
    const front = await startFront(() => 'forward');
    try {
      front.hide('batch-settlement');
      front.dropV2();
      const { agent } = await voucherAgent();
      const url = `${front.url}/articles/v1-expired`;
      expect(await fetchPage(agent, url)).toEqual(served('v1-expired'));
      expect(await fetchPage(agent, url)).toEqual(served('v1-expired'));
      // Its token names the gate the site minted for it, not the 402's: kept with no token of its
      // own, its receipt lasts a token's life from its authorization's validBefore (five minutes on).
      await moveClock(31 * 60);
      expect(await fetchPage(agent, url)).toEqual({ reason: 'payment_unconfirmed' });
      await moveClock(5 * 60);
      expect(await fetchPage(agent, url)).toEqual(served('v1-expired'));
      expect(await paymentsFor('/articles/v1-expired')).toEqual(authorizations(2));
    } finally {
      await front.close();
    }
  }, 60_000);

  it('a voucher the gate charged, its answer lost, sent again after its token expired: its gate API says what it bought, and the page is paid anew with the next voucher, not refused for good', async () => {
    await afterLostVoucher('/articles/lost-voucher-expired', 'forward', async ({ front, agent, events, url }) => {
      await moveClock(52 * 60);
      expect(await fetchPage(agent, url)).toEqual(served('lost-voucher-expired'));
      expect(front.forwardedPaid).toContain(front.lost()); // the lost voucher was sent again first
      const [channel] = agent.channels();
      expect(await apiSide(channel.channelId)).toEqual({
        payments: [
          ['/articles/lost-voucher-expired', PRICE],
          ['/articles/lost-voucher-expired', 2n * PRICE],
        ],
        charged: 2n * PRICE,
      });
      expect(channel).toMatchObject({ charged: 2n * PRICE });
      expect(events.map((event) => event.url)).toEqual([url, url]);
      // The new voucher's token opens the page: nothing more is paid.
      expect(await fetchPage(agent, url)).toEqual(served('lost-voucher-expired'));
      expect(await apiSide(channel.channelId)).toMatchObject({ charged: 2n * PRICE });
    });
  }, 60_000);

  it("a lost voucher's verify_url a front stands in for with a token forged to have expired, past its gate's hold: the page is not paid again before a token's default life from the last moment its gate could take it", async () => {
    const path = '/articles/lost-forged-expired';
    await afterLostVoucher(path, 'refuse402', async ({ front, agent, url }) => {
      front.standInWithForgedLife(path, 0);
      await moveClock(17 * 60);
      expect(await fetchPage(agent, url)).toEqual({ reason: 'payment_unconfirmed' });
      expect(await paymentsFor(path)).toEqual([['voucher', PRICE]]);
      // Past a token's default life from the end of its gate's hold, the real token has expired too: paid anew.
      front.standInForVerify(undefined);
      await moveClock(35 * 60);
      expect(await fetchPage(agent, url)).toEqual(served('lost-forged-expired'));
      expect(await paymentsFor(path)).toHaveLength(2);
    });
  }, 60_000);

  it("two pages' vouchers lost, a verify_url a front stands in for answering one of them with a forged token past its hold: the other page's lost voucher is not forgotten, its page not paid again while its token lives", async () => {
    const lost: string[] = [];
    let down = true;
    const front = await startFront((header) => {
      const which = lost.indexOf(header);
      if (which >= 0) return down ? 'refuse502' : which === 0 ? 'forward' : 'refuse402';
      if (lost.length < 2) {
        lost.push(header);
        return 'forwardThen502';
      }
      return 'forward';
    });
    try {
      const { agent } = await voucherAgent();
      const [first, second] = ['/articles/twin-first', '/articles/twin-second'];
      expect(await fetchPage(agent, `${front.url}${first}`)).toEqual({ reason: 'payment_unconfirmed' });
      expect(await fetchPage(agent, `${front.url}${second}`)).toEqual({ reason: 'payment_unconfirmed' });
      down = false;
      const firstToken = peekAccessTokenPayload(front.tokenOf(first)!)!;
      front.standInForVerify((gateRef) =>
        gateRef === firstToken.gate_id
          ? {}
          : {
              access_token: forgedToken({ ...firstToken, url: second, gate_id: gateRef, exp: firstToken.iat }),
            },
      );
      await moveClock(17 * 60);
      expect(await fetchPage(agent, `${front.url}${second}`)).toEqual({ reason: 'payment_unconfirmed' });
      // The first page's voucher, sent again, is answered by its gate with the page: its token lives on.
      expect(await fetchPage(agent, `${front.url}${first}`)).toEqual(served('twin-first'));
      expect(await paymentsFor(first)).toHaveLength(1);
    } finally {
      await front.close();
    }
  }, 60_000);

  it("a lost voucher whose forged expired token from a stand-in verify_url comes with the gate's settlement on a 502: the receipt it leaves does not end before a token's default life from the send", async () => {
    const path = '/articles/lost-receipt-bypass';
    let lost: string | undefined;
    let resends = 0;
    const front = await startFront((header, index) => {
      if (index === 0) {
        lost = header;
        return 'forwardThen502';
      }
      if (header !== lost) return 'forward';
      // Down at first; past the hold, the gate's answer passed on as a 502 keeping its settlement once, then refused.
      if (resends++ < 6) return 'refuse502';
      return resends === 8 ? 'forwardThen502WithSettlement' : 'refuse402';
    });
    try {
      const { agent } = await voucherAgent();
      const url = `${front.url}${path}`;
      expect(await fetchPage(agent, url)).toEqual({ reason: 'payment_unconfirmed' });
      front.standInWithForgedLife(path, 0);
      await moveClock(17 * 60);
      resends = 7;
      expect(await fetchPage(agent, url)).toMatchObject({ status: 502 });
      expect(await fetchPage(agent, url)).toEqual({ reason: 'payment_unconfirmed' });
      expect(await paymentsFor(path)).toEqual([['voucher', PRICE]]);
    } finally {
      await front.close();
    }
  }, 60_000);

  it('two lost vouchers at one total, a correction claiming it charged: the page whose voucher the gate never took is paid anew once a token bought then would have expired, not refused for good', async () => {
    let blocked: string | undefined;
    let lost: string | undefined;
    let down = true;
    const front = await startFront((header, index) => {
      if (index === 1) blocked = header;
      if (header === blocked) return down ? 'refuse429' : 'forward';
      if (lost === undefined && index > 1) {
        lost = header;
        return 'forwardThen502';
      }
      if (header === lost) return down ? 'refuse502' : 'forward';
      return 'forward';
    });
    try {
      const { agent } = await voucherAgent();
      const url = (name: string) => `${front.url}/articles/claimed-${name}`;
      expect(await fetchPage(agent, url('one'))).toEqual(served('claimed-one'));
      expect(await fetchPage(agent, url('a'))).toEqual({ reason: 'payment_unconfirmed' }); // never reached the gate
      expect(await fetchPage(agent, url('b'))).toEqual({ reason: 'payment_unconfirmed' }); // charged, its answer lost
      expect(await fetchPage(agent, url('c'))).toEqual(served('claimed-c')); // after the gate's correction
      down = false;
      await moveClock(17 * 60);
      expect(await fetchPage(agent, url('b'))).toEqual(served('claimed-b'));
      // Either could be the one charged (a front may stand in for the verify_url that said b): held
      // until a token bought with it would have expired, then paid anew.
      expect(await fetchPage(agent, url('a'))).toEqual({ reason: 'payment_unconfirmed' });
      await moveClock(35 * 60);
      expect(await fetchPage(agent, url('a'))).toEqual(served('claimed-a'));
      expect(await paymentsFor('/articles/claimed-a')).toHaveLength(1);
      expect(await paymentsFor('/articles/claimed-b')).toHaveLength(1);
    } finally {
      await front.close();
    }
  }, 60_000);

  it('a lost voucher whose stand-in verify_url answers a token forged to live a week, its page then read: once the real token expired, the page is paid anew, not refused for a week', async () => {
    const path = '/articles/lost-week-forged';
    await afterLostVoucher(path, 'forward', async ({ front, agent, url }) => {
      front.standInWithForgedLife(path, 7 * 24 * 3600);
      await moveClock(17 * 60);
      expect(await fetchPage(agent, url)).toEqual(served('lost-week-forged')); // the voucher sent again after the forgery's refusal
      front.standInForVerify(undefined);
      await moveClock(35 * 60);
      expect(await fetchPage(agent, url)).toEqual(served('lost-week-forged'));
      expect(await paymentsFor(path)).toHaveLength(2);
    });
  }, 60_000);

  it('a lost voucher the gate charged, refused by a front past its hold with verify_url failing: not paid again while a token bought then would live', async () => {
    const path = '/articles/lost-refused-past-hold';
    await afterLostVoucher(path, 'refuse402', async ({ front, agent, url }) => {
      front.failVerify(true);
      await moveClock(17 * 60);
      expect(await fetchPage(agent, url)).toEqual({ reason: 'payment_unconfirmed' });
      expect(await paymentsFor(path)).toEqual([['voucher', PRICE]]);
      // Its gate could have taken it until its hold (a front holding it may send it on late): still held 30 minutes after the send.
      await moveClock(14 * 60);
      expect(await fetchPage(agent, url)).toEqual({ reason: 'payment_unconfirmed' });
      // Its token expired, the API says what it bought: counted charged, the page paid anew.
      front.failVerify(false);
      await moveClock(21 * 60);
      expect(await fetchPage(agent, url)).toEqual(served('lost-refused-past-hold'));
      expect(await paymentsFor(path)).toHaveLength(2);
    });
  }, 60_000);

  it("a channel's first voucher, its deposit in it, answered 429 by a front at every send: once the chain shows the deposit never made, the channel counts it no more and the next page deposits anew", async () => {
    let blocked: string | undefined;
    const front = await startFront((header, index) => {
      if (index === 0) blocked = header;
      return header === blocked ? 'refuse429' : 'forward';
    });
    try {
      const { agent } = await voucherAgent();
      const url = (i: number) => `${front.url}/articles/deposit-never-made-${i}`;
      expect(await fetchPage(agent, url(1))).toEqual({ reason: 'payment_unconfirmed' });
      expect(front.forwardedPaid).toHaveLength(0);
      const [channel] = agent.channels();
      expect(channel).toMatchObject({ deposited: 1_500_000n, charged: 0n });
      expect(await depositsOf(channel.channelId)).toHaveLength(0);
      // It may have been made as far as the agent knows: reserved, not spent.
      expect(agent.spent()).toMatchObject({ usd: '0', reservedUsd: '1.5' });
      // Counted in the channel, it is not made anew: the gate has no such channel.
      expect(await fetchPage(agent, url(2))).toEqual({ reason: 'invalid_batch_settlement_evm_channel_not_found' });
      // Its authorization over by the chain's clock (and a minute more), the chain says it was never made.
      await moveClock(7 * 60); // signed valid 300 s at most
      expect(await agent.settleRefused()).toEqual({ freed: 1, spent: 0 });
      expect(agent.channels()[0]).toMatchObject({ deposited: 0n, charged: 0n });
      expect(await fetchPage(agent, url(2))).toEqual(served('deposit-never-made-2'));
      expect(await fetchPage(agent, url(3))).toEqual(served('deposit-never-made-3'));
      expect(await depositsOf(channel.channelId)).toHaveLength(1);
      expect(agent.channels()[0]).toMatchObject({ deposited: 1_500_000n, charged: 2n * PRICE });
      expect(agent.spent()).toMatchObject({ usd: '1.5', reservedUsd: '0' });
    } finally {
      await front.close();
    }
  }, 60_000);

  it("the same, the agent's process stopped before the chain could say: restarted from its channel file, it reads the escrow (no such channel) and the next page deposits anew", async () => {
    let blocked: string | undefined;
    const front = await startFront((header, index) => {
      if (index === 0) blocked = header;
      return header === blocked ? 'refuse429' : 'forward';
    });
    const channelFile = join(mkdtempSync(join(tmpdir(), 'crawlgate-agent-')), 'channels.json');
    try {
      const { agent: stopped, wallet } = await voucherAgent({ channelFile });
      const url = (i: number) => `${front.url}/articles/deposit-never-made-restart-${i}`;
      expect(await fetchPage(stopped, url(1))).toEqual({ reason: 'payment_unconfirmed' });
      expect(front.forwardedPaid).toHaveLength(0);
      stopped.close(); // as a process that stopped: its held deposit is forgotten with it
      const { agent } = await voucherAgent({ wallet, channelFile });
      const [channel] = agent.channels();
      expect(channel).toMatchObject({ deposited: 1_500_000n, charged: 0n });
      expect(await fetchPage(agent, url(2))).toEqual(served('deposit-never-made-restart-2'));
      expect(await fetchPage(agent, url(3))).toEqual(served('deposit-never-made-restart-3'));
      expect(await depositsOf(channel.channelId)).toHaveLength(1);
      expect(agent.channels()[0]).toMatchObject({ deposited: 1_500_000n, charged: 2n * PRICE });
      agent.close();
    } finally {
      await front.close();
    }
  }, 60_000);
});
