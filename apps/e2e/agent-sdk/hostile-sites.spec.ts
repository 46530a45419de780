import {
  decodeBase64Json,
  encodeBase64Json,
  NETWORKS,
  signAccessToken,
  signGate,
  TRANSFER_WITH_AUTHORIZATION_TYPES,
  type PaymentRequirementsV1,
  type PaymentRequirementsV2,
} from '@crawlgate/core';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent as Dispatcher, RetryAgent } from 'undici';
import { createWalletClient, http, verifyTypedData } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { BASE_USDC, baseV1Offer } from './support/base-offers';
import {
  BudgetExceededError,
  createAgent,
  InsecureConnectionError,
  PaymentNotAllowedError,
  UnsupportedPaymentError,
  type AgentOptions,
  type PaymentEvent,
  type UnconfirmedPaymentEvent,
} from '../../../libs/agent-sdk/src';

/*
 * Sites that ask for more than they should: crafted 402s from real HTTP servers on loopback. No
 * chain is involved; a site "accepts" a payment by answering 200 to any payment header.
 */

const SEPOLIA_USDC = NETWORKS['base-sepolia'].usdc.address!;
const DEAD = '0x000000000000000000000000000000000000dEaD';
const DEVCHAIN_USDC = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const PAY_TO = privateKeyToAccount(generatePrivateKey()).address;

interface Seen {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

interface Site {
  url: string;
  seen: Seen[];
  close(): Promise<void>;
}

const sites: Site[] = [];
afterEach(async () => {
  await Promise.all(sites.splice(0).map((site) => site.close()));
});

/** A node:http server on loopback that records every request it receives. */
async function startSite(
  handle: (request: IncomingMessage, response: ServerResponse, site: Site) => void,
): Promise<Site> {
  const seen: Seen[] = [];
  const server = createServer((request, response) => {
    const entry = { method: request.method!, path: request.url!, headers: request.headers, body: '' };
    seen.push(entry);
    request.setEncoding('utf8').on('data', (chunk: string) => (entry.body += chunk));
    request.on('end', () => handle(request, response, site));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const site: Site = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  sites.push(site);
  return site;
}

const v1 = (overrides: Partial<PaymentRequirementsV1> = {}) => baseV1Offer(PAY_TO, overrides);

const v2 = (overrides: Partial<PaymentRequirementsV2> = {}): PaymentRequirementsV2 => ({
  scheme: 'exact',
  network: 'eip155:8453',
  amount: '1000',
  asset: BASE_USDC,
  payTo: PAY_TO,
  maxTimeoutSeconds: 60,
  extra: { name: 'USD Coin', version: '2', gate_id: 'gate_v2' },
  ...overrides,
});

/** A 402 carrying x402 v1 offers in the body and v2 offers in PAYMENT-REQUIRED. */
function ask(
  response: ServerResponse,
  offers: { v1?: PaymentRequirementsV1[]; v2?: PaymentRequirementsV2[] },
  url = 'http://site/page',
): void {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (offers.v2)
    headers['payment-required'] = encodeBase64Json({ x402Version: 2, resource: { url }, accepts: offers.v2 });
  response
    .writeHead(402, headers)
    .end(JSON.stringify({ x402Version: 1, error: 'payment required', accepts: offers.v1 ?? [] }));
}

const paymentOf = (headers: IncomingHttpHeaders) =>
  (headers['payment-signature'] ?? headers['x-payment']) as string | undefined;

/** A site that asks with `offers` and answers 200 "paid" to any payment. */
const payingSite = (offers: Parameters<typeof ask>[1]) =>
  startSite((request, response) => {
    if (paymentOf(request.headers))
      response
        .writeHead(200, { 'x-payment-response': encodeBase64Json({ success: true, transaction: '0x01' }) })
        .end('paid');
    else ask(response, offers);
  });

/** Five fetches of `url` at once: each one's status, or the reason it was refused. */
const fiveFetches = (agent: ReturnType<typeof createAgent>, url: string) =>
  Promise.all(
    [1, 2, 3, 4, 5].map(() =>
      agent.fetch(url).then(
        (response) => response.status,
        (error: { reason?: string }) => error.reason,
      ),
    ),
  );

const account = privateKeyToAccount(generatePrivateKey());
const agentWith = (options: Partial<AgentOptions> = {}) =>
  createAgent({ account, maxPriceUsd: '0.01', budgetUsd: '1', ...options });

interface SentPayment {
  x402Version: number;
  network?: string;
  accepted?: PaymentRequirementsV2;
  payload: {
    signature: `0x${string}`;
    authorization: {
      from: `0x${string}`;
      to: `0x${string}`;
      value: string;
      validAfter: string;
      validBefore: string;
      nonce: `0x${string}`;
    };
  };
}
/**
 * A page whose second 402 comes 300 ms after the first, once the first fetch has paid (answered
 * with the page and its token) and cached the token: a read with that token gets `tokenRead`.
 */
async function pageWithLateSecond402(tokenRead: (response: ServerResponse) => void): Promise<Site> {
  let asked = 0;
  const now = Math.floor(Date.now() / 1000);
  const token = signAccessToken(
    { gate_id: 'gate_v2', site_id: 'site_1', url: '/page', kid: 'k1', iat: now, exp: now + 600 },
    'secret',
  );
  return startSite((request, response) => {
    if (request.headers['x-crawlgate-token'] === token && !paymentOf(request.headers)) return tokenRead(response);
    if (paymentOf(request.headers))
      return void response
        .writeHead(200, {
          'x-crawlgate-token': token,
          'payment-response': encodeBase64Json({ success: true, transaction: '0x03' }),
        })
        .end('the page');
    setTimeout(() => ask(response, { v2: [v2()] }), asked++ === 0 ? 0 : 300);
  });
}

const paymentsSent = (site: Site) =>
  site.seen
    .map((request) => paymentOf(request.headers))
    .filter((value) => value !== undefined)
    .map((value) => decodeBase64Json(value) as SentPayment);

describe('the agent pays only in what it allows', () => {
  it('refuses a token it does not know, even on a chain it pays on, and signs nothing', async () => {
    const site = await payingSite({ v1: [v1({ asset: DEAD })] });
    const attempt = agentWith().fetch(`${site.url}/page`);
    await expect(attempt).rejects.toBeInstanceOf(PaymentNotAllowedError);
    await expect(attempt).rejects.toMatchObject({
      refused: [{ network: 'base', asset: DEAD, reason: 'asset_not_allowed' }],
    });
    expect(site.seen).toHaveLength(1);
  });

  it('takes no offer whose address is spelt in a way that could be a typo (all upper case, or mixed case not its checksum)', async () => {
    const upper = `0x${PAY_TO.slice(2).toUpperCase()}` as const;
    const flipped = `0x${[...PAY_TO.slice(2)].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('')}`;
    for (const payTo of [upper, flipped]) {
      const site = await payingSite({ v1: [v1({ payTo })], v2: [v2({ payTo })] });
      const attempt = agentWith().fetch(`${site.url}/page`);
      await expect(attempt).rejects.toBeInstanceOf(UnsupportedPaymentError);
      expect(paymentsSent(site)).toHaveLength(0);
    }
    // In lower case it is paid as usual.
    const lower = await payingSite({ v1: [v1({ payTo: PAY_TO.toLowerCase() as `0x${string}` })] });
    expect((await agentWith().fetch(`${lower.url}/page`)).status).toBe(200);
  });

  it('refuses chains it was not configured for', async () => {
    const site = await payingSite({
      v2: [
        v2({ network: 'eip155:1', asset: DEAD }),
        v2({ network: 'eip155:84532', asset: SEPOLIA_USDC, extra: { name: 'USDC', version: '2' } }),
      ],
    });
    const attempt = agentWith({ networks: ['base'] }).fetch(`${site.url}/page`);
    await expect(attempt).rejects.toMatchObject({
      name: 'PaymentNotAllowedError',
      refused: [
        { network: 'eip155:1', reason: 'network_not_allowed' },
        { network: 'eip155:84532', reason: 'network_not_allowed' },
      ],
    });
    expect(site.seen).toHaveLength(1);
  });

  it('lists at most 10 of the offers it refused, however many a 402 names', async () => {
    const site = await payingSite({ v1: Array.from({ length: 3_000 }, () => v1({ asset: DEAD })) });
    const refusal = await agentWith()
      .fetch(`${site.url}/page`)
      .catch((error: PaymentNotAllowedError) => error);
    expect(refusal).toBeInstanceOf(PaymentNotAllowedError);
    expect((refusal as PaymentNotAllowedError).refused).toHaveLength(10);
    expect((refusal as PaymentNotAllowedError).message.length).toBeLessThan(2_000);
  });

  it("refuses the right token under an EIP-712 domain that is not the token's", async () => {
    const site = await payingSite({
      v1: [v1({ extra: { name: 'USDC', version: '2' } }), v1({ extra: { name: 'USD Coin', version: '3' } })],
    });
    const attempt = agentWith().fetch(`${site.url}/page`);
    await expect(attempt).rejects.toMatchObject({
      name: 'PaymentNotAllowedError',
      refused: [{ reason: 'domain_mismatch' }, { reason: 'domain_mismatch' }],
    });
    expect(site.seen).toHaveLength(1);
  });

  it('ignores hostile offers beside an allowed one, and signs for the real USDC domain', async () => {
    const site = await payingSite({
      v1: [
        v1({ asset: DEAD, maxAmountRequired: '1' }),
        v1({ network: 'base-sepolia', asset: SEPOLIA_USDC, extra: { name: 'USDC', version: '2' } }),
      ],
    });
    const response = await agentWith().fetch(`${site.url}/page`);
    expect(response.status).toBe(200);
    const [payment] = paymentsSent(site);
    expect(payment).toMatchObject({
      x402Version: 1,
      network: 'base-sepolia',
      payload: { authorization: { to: PAY_TO, value: '1000' } },
    });
    const { authorization, signature } = payment.payload;
    const message = {
      ...authorization,
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
    };
    const domain = { name: 'USDC', version: '2', chainId: 84532, verifyingContract: SEPOLIA_USDC };
    expect(
      await verifyTypedData({
        address: account.address,
        domain,
        types: TRANSFER_WITH_AUTHORIZATION_TYPES,
        primaryType: 'TransferWithAuthorization',
        message,
        signature,
      }),
    ).toBe(true);
  });

  it('pays a devchain USDC only when the caller allows that network and asset', async () => {
    const offer = v2({
      network: 'eip155:31337',
      asset: DEVCHAIN_USDC,
      extra: { name: 'USD Coin', version: '2', gate_id: 'gate_local' },
    });
    const refusing = await payingSite({ v2: [offer] });
    await expect(agentWith().fetch(`${refusing.url}/page`)).rejects.toBeInstanceOf(PaymentNotAllowedError);
    expect(refusing.seen).toHaveLength(1);

    const site = await payingSite({ v2: [offer] });
    const local = agentWith({ networks: [{ network: 'local', asset: DEVCHAIN_USDC.toLowerCase() as `0x${string}` }] });
    expect((await local.fetch(`${site.url}/page`)).status).toBe(200);
    expect(paymentsSent(site)).toEqual([expect.objectContaining({ x402Version: 2, accepted: offer })]);
  });

  it('names the asset of a custom network by CAIP-2, and checks the domain it is given', async () => {
    const networks: AgentOptions['networks'] = [
      { network: 'eip155:777', asset: DEVCHAIN_USDC, domain: { name: 'Test Dollar', version: '1' } },
    ];
    const wrong = await payingSite({
      v2: [v2({ network: 'eip155:777', asset: DEVCHAIN_USDC, extra: { name: 'USD Coin', version: '2' } })],
    });
    await expect(agentWith({ networks }).fetch(`${wrong.url}/page`)).rejects.toMatchObject({
      refused: [{ reason: 'domain_mismatch' }],
    });
    const right = await payingSite({
      v2: [v2({ network: 'eip155:777', asset: DEVCHAIN_USDC, extra: { name: 'Test Dollar', version: '1' } })],
    });
    expect((await agentWith({ networks }).fetch(`${right.url}/page`)).status).toBe(200);
  });

  it('rejects allow-lists it cannot honour at creation', () => {
    expect(() => agentWith({ networks: ['local'] })).toThrow(/local.*asset/);
    expect(() => agentWith({ networks: [] })).toThrow(RangeError);
    expect(() => agentWith({ networks: [{ network: 'mainnet' as 'base', asset: BASE_USDC }] })).toThrow(/mainnet/);
    expect(() => agentWith({ networks: [{ network: 'base', asset: 'not an address' as `0x${string}` }] })).toThrow(
      /address/,
    );
  });
});

describe('an authorization lives a few minutes at most', () => {
  const lifetime = (payment: SentPayment) => {
    const now = Math.floor(Date.now() / 1000);
    return {
      before: Number(payment.payload.authorization.validBefore) - now,
      after: Number(payment.payload.authorization.validAfter) - now,
    };
  };

  it('caps validBefore at 300 s however long the site asks for', async () => {
    const site = await payingSite({ v1: [v1({ maxTimeoutSeconds: 1e9 })] });
    await agentWith().fetch(`${site.url}/page`);
    const { before, after } = lifetime(paymentsSent(site)[0]);
    expect(before).toBeGreaterThan(290);
    expect(before).toBeLessThanOrEqual(300);
    // Signed 600 s back; the same 10 s of slack as validBefore's for a loaded machine between signing and this check.
    expect(after).toBeGreaterThanOrEqual(-610);
    expect(after).toBeLessThanOrEqual(-599);
  });

  it('keeps a shorter timeout the site asks for, and a lower cap the caller sets', async () => {
    const short = await payingSite({ v1: [v1({ maxTimeoutSeconds: 30 })] });
    await agentWith().fetch(`${short.url}/page`);
    expect(lifetime(paymentsSent(short)[0]).before).toBeLessThanOrEqual(30);

    const capped = await payingSite({ v2: [v2({ maxTimeoutSeconds: 3600 })] });
    await agentWith({ maxAuthorizationSeconds: 60 }).fetch(`${capped.url}/page`);
    expect(lifetime(paymentsSent(capped)[0]).before).toBeLessThanOrEqual(60);
    expect(lifetime(paymentsSent(capped)[0]).before).toBeGreaterThan(50);
  });

  it('refuses a cap above 300 s or below the 10 s a verifier needs', () => {
    expect(() => agentWith({ maxAuthorizationSeconds: 3600 })).toThrow(RangeError);
    expect(() => agentWith({ maxAuthorizationSeconds: 5 })).toThrow(RangeError);
  });
});

describe('x402 v2 first', () => {
  it('pays the v2 offer, echoing the requirement that names the gate, when v1 is offered too', async () => {
    const offer = v2();
    const site = await payingSite({ v1: [v1()], v2: [offer] });
    expect((await agentWith().fetch(`${site.url}/page`)).status).toBe(200);
    expect(site.seen[1].headers['x-payment']).toBeUndefined();
    expect(paymentsSent(site)).toEqual([expect.objectContaining({ x402Version: 2, accepted: offer })]);
  });

  it('retries a pending settlement with the same v2 payment, so it reaches the same gate', async () => {
    let attempts = 0;
    const site = await startSite((request, response) => {
      if (!paymentOf(request.headers)) return ask(response, { v1: [v1()], v2: [v2()] });
      if (++attempts === 1) return void response.writeHead(503, { 'retry-after': '1' }).end('settlement pending');
      response
        .writeHead(200, { 'payment-response': encodeBase64Json({ success: true, transaction: '0x02' }) })
        .end('paid');
    });
    expect((await agentWith().fetch(`${site.url}/page`)).status).toBe(200);
    const [first, second] = site.seen.slice(1).map((request) => request.headers['payment-signature']);
    expect(first).toBeDefined();
    expect(second).toBe(first);
    expect((decodeBase64Json(first as string) as SentPayment).accepted?.extra?.gate_id).toBe('gate_v2');
  });

  it('pays each of concurrent fetches of a site that gives no token: none is answered the bare 402', async () => {
    const site = await payingSite({ v2: [v2()] });
    const agent = agentWith();
    const statuses = await Promise.all(
      ['/search?q=a', '/search?q=b', '/search?q=c', '/search?q=d'].map(
        async (page) => (await agent.fetch(`${site.url}${page}`)).status,
      ),
    );
    expect(statuses).toEqual([200, 200, 200, 200]);
    expect(paymentsSent(site)).toHaveLength(4);
    expect(agent.spent()).toMatchObject({ payments: 4 });
  });

  it('pays once for concurrent fetches of a page whose 402s arrive apart: the later one reads with the token', async () => {
    const site = await pageWithLateSecond402((response) => void response.writeHead(200).end('the page'));
    const agent = agentWith();
    const pages = await Promise.all([1, 2].map(async () => (await agent.fetch(`${site.url}/page`)).text()));
    expect(pages).toEqual(['the page', 'the page']);
    expect(paymentsSent(site)).toHaveLength(1);
    expect(agent.spent()).toMatchObject({ payments: 1 });
    // A payment never travels with a token: the site would serve by the token and keep the payment.
    expect(site.seen.filter((seen) => paymentOf(seen.headers) && seen.headers['x-crawlgate-token'])).toEqual([]);
  });

  it('signs one authorization for concurrent fetches of a page whose site refuses it: the site holds it, and could still settle it', async () => {
    // Each payment refused after a while (another 402), the authorization kept.
    const site = await startSite((request, response) => {
      if (paymentOf(request.headers)) setTimeout(() => ask(response, { v2: [v2()] }), 200);
      else ask(response, { v2: [v2()] });
    });
    const agent = agentWith();
    const outcomes = await fiveFetches(agent, `${site.url}/page`);
    expect(outcomes).toEqual(Array(5).fill('payment_refused'));
    expect(paymentsSent(site)).toHaveLength(1);
    expect(agent.spent()).toMatchObject({ payments: 0, reservedUsd: '0.001' });
  });

  it.each([
    ['no token', undefined],
    ['a junk token', 'junk'],
    ['a token of its own making', 'forged'],
  ])(
    'signs one authorization for concurrent fetches of a refused page, however the site times their 402s (its refusal carrying %s)',
    async (_what, tokenKind) => {
      const now = Math.floor(Date.now() / 1000);
      const token =
        tokenKind === 'forged'
          ? signAccessToken(
              { gate_id: 'gate_v2', site_id: 'site_1', url: '/page', kid: 'k1', iat: now, exp: now + 600 },
              'secret',
            )
          : tokenKind;
      // The first fetch's 402 at once; each other fetch's 402 held back until a payment was refused,
      // then one at a time (each a payment the site could refuse and keep, were it made).
      const held: ServerResponse[] = [];
      let asked = 0;
      const releaseOne = () => {
        const next = held.shift();
        if (next) ask(next, { v2: [v2()] });
        if (held.length > 0) setTimeout(releaseOne, 50);
      };
      const site = await startSite((request, response) => {
        if (paymentOf(request.headers)) {
          if (token) response.setHeader('x-crawlgate-token', token);
          ask(response, { v2: [v2()] });
          releaseOne();
        } else if (asked++ === 0) ask(response, { v2: [v2()] });
        else held.push(response);
      });
      const agent = agentWith();
      const outcomes = await fiveFetches(agent, `${site.url}/page`);
      expect(outcomes).toEqual(Array(5).fill('payment_refused'));
      expect(paymentsSent(site)).toHaveLength(1);
      // A fetch sent after the refusal pays nothing while the site holds that authorization: it
      // could still settle it (a site refusing every payment would otherwise hold one per fetch).
      setTimeout(releaseOne, 100);
      await expect(agent.fetch(`${site.url}/page`)).rejects.toMatchObject({ reason: 'payment_held' });
      expect(paymentsSent(site)).toHaveLength(1);
    },
  );

  it('pays no 402 that a read with the cached token was redirected to: it is another page’s, and the payment would go there', async () => {
    // Another page, gated too (a victim publisher's, or a network attacker's answer): it would take any payment.
    const elsewhere = await startSite((request, response) => {
      if (paymentOf(request.headers)) return void response.writeHead(200).end('elsewhere, paid');
      ask(response, { v1: [v1({ payTo: DEAD })], v2: [v2({ payTo: DEAD })] }, `${elsewhere.url}/landing`);
    });
    // The read with the token the first fetch bought is sent away.
    const site = await pageWithLateSecond402(
      (response) => void response.writeHead(302, { location: `${elsewhere.url}/landing` }).end(),
    );
    const agent = agentWith();
    const [first, second] = await Promise.all([1, 2].map(() => agent.fetch(`${site.url}/page`)));
    expect(await first.text()).toBe('the page');
    // The second fetch gets the other page's 402, unpaid: the caller decides whether to buy that page.
    expect(second.status).toBe(402);
    expect(second.url).toBe(`${elsewhere.url}/landing`);
    expect(paymentsSent(elsewhere)).toHaveLength(0);
    expect(paymentsSent(site)).toHaveLength(1);
    expect(agent.spent()).toMatchObject({ payments: 1 });
  });

  it('still pays a v1-only site with X-PAYMENT, and v1 when the v2 offer is not allowed', async () => {
    const v1Only = await payingSite({ v1: [v1()] });
    expect((await agentWith().fetch(`${v1Only.url}/page`)).status).toBe(200);
    expect(v1Only.seen[1].headers['x-payment']).toBeDefined();

    const hostileV2 = await payingSite({ v1: [v1()], v2: [v2({ asset: DEAD })] });
    expect((await agentWith().fetch(`${hostileV2.url}/page`)).status).toBe(200);
    expect(paymentsSent(hostileV2)).toEqual([expect.objectContaining({ x402Version: 1, network: 'base' })]);
  });
});

describe('payment and token headers stay with their origin', () => {
  const SECRET_HEADERS = ['x-payment', 'payment-signature', 'x-crawlgate-token', 'authorization'];

  it("follows a redirect to another origin after paying, without the payment or the caller's Authorization", async () => {
    const elsewhere = await startSite((_, response) => void response.end('landing'));
    const site = await startSite((request, response) => {
      if (paymentOf(request.headers)) response.writeHead(302, { location: `${elsewhere.url}/landing` }).end();
      else ask(response, { v1: [v1()], v2: [v2()] });
    });
    const response = await agentWith().fetch(`${site.url}/page`, { headers: { authorization: 'Bearer mine' } });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('landing');
    expect(elsewhere.seen).toHaveLength(1);
    for (const name of SECRET_HEADERS) expect(elsewhere.seen[0].headers[name]).toBeUndefined();
    expect(paymentOf(site.seen[1].headers)).toBeDefined();
  });

  it("never sends a page's access token to the origin a later redirect points to", async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = signAccessToken(
      { gate_id: 'gate_1', site_id: 'site_1', url: '/page', kid: 'k1', iat: now, exp: now + 600 },
      'secret',
    );
    const elsewhere = await startSite((_, response) => void response.end('moved'));
    const site = await startSite((request, response) => {
      if (request.headers['x-crawlgate-token']) response.writeHead(301, { location: `${elsewhere.url}/page` }).end();
      else if (paymentOf(request.headers)) response.writeHead(200, { 'x-crawlgate-token': token }).end('paid');
      else ask(response, { v1: [v1()] });
    });
    const agent = agentWith();
    expect((await agent.fetch(`${site.url}/page`)).status).toBe(200);
    expect(await (await agent.fetch(`${site.url}/page`)).text()).toBe('moved');
    expect(site.seen[2].headers['x-crawlgate-token']).toBe(token);
    expect(elsewhere.seen).toHaveLength(1);
    for (const name of SECRET_HEADERS) expect(elsewhere.seen[0].headers[name]).toBeUndefined();
  });

  it('sends the payment only to the page whose 402 asked for it, not on through the redirect it answered with', async () => {
    // A payment for /old opens /old: a redirect answering it is what it bought, even within the origin.
    const site = await startSite((request, response) => {
      const paid = paymentOf(request.headers);
      if (request.url === '/old' && paid)
        response
          .writeHead(307, {
            location: '/new',
            'payment-response': encodeBase64Json({ success: true, transaction: '0x04' }),
          })
          .end();
      else if (request.url === '/new' && paid) response.end('new content');
      else ask(response, { v1: [v1()] }, `http://site${request.url}`);
    });
    const agent = agentWith();
    const response = await agent.fetch(`${site.url}/old`);
    // One fetch pays once: /new asks its own price, and its 402 is the answer.
    expect([response.status, response.url]).toEqual([402, `${site.url}/new`]);
    expect(site.seen.map((request) => [request.path, paymentOf(request.headers) !== undefined])).toEqual([
      ['/old', false],
      ['/old', true],
      ['/new', false],
    ]);
    expect(agent.spent()).toMatchObject({ payments: 1 });
  });

  it("caches the token the paid redirect carried for the paid page, never one another origin's answer carried", async () => {
    const now = Math.floor(Date.now() / 1000);
    const tokenFor = (gate: string) =>
      signAccessToken(
        { gate_id: gate, site_id: 'site_1', url: '/page', kid: 'k1', iat: now, exp: now + 600 },
        'secret',
      );
    const bought = tokenFor('gate_bought');
    const planted = tokenFor('gate_planted');
    // The landing page answers with a token of its choosing, as if for the paying site's page.
    const elsewhere = await startSite(
      (_, response) => void response.writeHead(200, { 'x-crawlgate-token': planted }).end('landing'),
    );
    const site = await startSite((request, response) => {
      const token = request.headers['x-crawlgate-token'];
      if (token === bought || paymentOf(request.headers))
        response.writeHead(302, { location: `${elsewhere.url}/landing`, 'x-crawlgate-token': bought }).end();
      else ask(response, { v1: [v1()] });
    });
    const agent = agentWith();
    for (let i = 0; i < 2; i++) expect(await (await agent.fetch(`${site.url}/page`)).text()).toBe('landing');
    expect(paymentsSent(site)).toHaveLength(1);
    expect(site.seen.map((request) => request.headers['x-crawlgate-token'])).toEqual([undefined, undefined, bought]);
  });

  it('sends the payment to the origin whose 402 asked for it, not to the one that redirected there', async () => {
    const payee = await payingSite({ v2: [v2()] });
    const redirector = await startSite(
      (_, response) => void response.writeHead(302, { location: `${payee.url}/page` }).end(),
    );
    expect(await (await agentWith().fetch(`${redirector.url}/page`)).text()).toBe('paid');
    expect(redirector.seen.map((request) => paymentOf(request.headers))).toEqual([undefined]);
    expect(payee.seen.map((request) => paymentOf(request.headers) !== undefined)).toEqual([false, true]);
  });

  it("resends a Request's method and body on the paid retry and through a 307", async () => {
    const site = await startSite((request, response) => {
      if (request.url === '/form' && paymentOf(request.headers))
        response.writeHead(307, { location: '/form/next' }).end();
      else if (request.url === '/form/next') response.end('posted');
      else ask(response, { v2: [v2()] });
    });
    const response = await agentWith().fetch(
      new Request(`${site.url}/form`, { method: 'POST', body: 'q=1', headers: { 'content-type': 'text/plain' } }),
    );
    expect(await response.text()).toBe('posted');
    expect(
      site.seen.map((request) => [request.method, request.path, request.body, request.headers['content-type']]),
    ).toEqual([
      ['POST', '/form', 'q=1', 'text/plain'],
      ['POST', '/form', 'q=1', 'text/plain'],
      ['POST', '/form/next', 'q=1', 'text/plain'],
    ]);
  });

  it('gives up on a redirect loop after a bounded number of hops, the payment sent once', async () => {
    const site = await startSite((request, response) => {
      if (paymentOf(request.headers) || request.url === '/loop') response.writeHead(302, { location: '/loop' }).end();
      else ask(response, { v1: [v1()] });
    });
    await expect(agentWith().fetch(`${site.url}/page`)).rejects.toThrow(/redirect/);
    expect(site.seen.length).toBeLessThanOrEqual(2 + 10);
    expect(paymentsSent(site)).toHaveLength(1);
  });

  it.each(['data:text/plain,from-a-data-url', 'file:///etc/hostname'])(
    'follows no redirect to a URL that is not http(s), as fetch does not: %s',
    async (location) => {
      const site = await startSite((_, response) => void response.writeHead(302, { location }).end());
      await expect(agentWith().fetch(`${site.url}/page`)).rejects.toThrow(/not http/);
    },
  );

  it('posts nothing to a plain-http verify_url off loopback, and learns no API there', async () => {
    // After a 5xx the agent asks verify_url for the token its payment bought: a site naming a host
    // of the agent's network would have it POST there.
    const site = await startSite((request, response) => {
      if (paymentOf(request.headers)) return void response.writeHead(500).end('failed');
      response.writeHead(402, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          x402Version: 1,
          accepts: [v1()],
          verify_url: 'http://10.0.0.1:9/v1/gates/gate_1/verify',
        }),
      );
    });
    const requested: string[] = [];
    const recording: typeof fetch = (input, init) => {
      requested.push(String(input instanceof Request ? input.url : input));
      return fetch(input, init);
    };
    const agent = agentWith({ fetch: recording });
    expect((await agent.fetch(`${site.url}/page`)).status).toBe(500);
    expect(paymentsSent(site)).toHaveLength(1);
    expect(requested.every((url) => url.startsWith(site.url))).toBe(true);
    await expect(agent.profile()).rejects.toThrow(/API URL is unknown/);
  });
});

describe('a verify_url on the agent’s own machine or network', () => {
  const PUBLIC_PAGE = 'https://pages.example/page';
  const LAN_PAGE = 'https://192.168.1.20/page';
  it.each([
    [PUBLIC_PAGE, 'https://127.0.0.1:2375/v1/gates/gate_1/verify', false],
    [PUBLIC_PAGE, 'https://10.0.0.5/v1/gates/gate_1/verify', false],
    [PUBLIC_PAGE, 'https://[::1]/v1/gates/gate_1/verify', false],
    [PUBLIC_PAGE, 'https://[fd00::5]/v1/gates/gate_1/verify', false],
    [PUBLIC_PAGE, 'https://[::ffff:7f00:1]/v1/gates/gate_1/verify', false],
    [PUBLIC_PAGE, 'https://0.0.0.0/v1/gates/gate_1/verify', false],
    [PUBLIC_PAGE, 'https://localhost/v1/gates/gate_1/verify', false],
    [PUBLIC_PAGE, 'https://admin.localhost/v1/gates/gate_1/verify', false],
    [PUBLIC_PAGE, 'https://localhost./v1/gates/gate_1/verify', false],
    [PUBLIC_PAGE, 'https://printer.local/v1/gates/gate_1/verify', false],
    [PUBLIC_PAGE, 'https://metadata.google.internal/v1/gates/gate_1/verify', false],
    // A page on a local network reaches no further than that network: not this machine, nor its metadata service.
    [LAN_PAGE, 'https://127.0.0.1:2375/v1/gates/gate_1/verify', false],
    [LAN_PAGE, 'https://169.254.169.254/v1/gates/gate_1/verify', false],
    [LAN_PAGE, 'https://10.0.0.5/v1/gates/gate_1/verify', true],
    [PUBLIC_PAGE, 'https://api.crawlgate.example/v1/gates/gate_1/verify', true],
    // A public page written as an IPv6 form embedding its IPv4 address (93.184.216.34) is no page of this machine.
    ['http://[::ffff:5db8:d822]/page', 'http://127.0.0.1:2375/v1/gates/gate_1/verify', false],
    ['http://[::ffff:5db8:d822]/page', 'http://localhost:2375/v1/gates/gate_1/verify', false],
    ['http://[::ffff:5db8:d822]/page', 'https://169.254.169.254/v1/gates/gate_1/verify', false],
    ['http://[64:ff9b::5db8:d822]/page', 'http://127.0.0.1:2375/v1/gates/gate_1/verify', false],
    ['http://[2002:5db8:d822::1]/page', 'http://127.0.0.1:2375/v1/gates/gate_1/verify', false],
    ['http://[2001:0:5db8:d822::1]/page', 'http://127.0.0.1:2375/v1/gates/gate_1/verify', false],
    ['http://[::ffff:5db8:d822]/page', 'https://api.crawlgate.example/v1/gates/gate_1/verify', true],
    // Names only this machine or its network resolves: dotless ones, cluster and service-mesh suffixes.
    [PUBLIC_PAGE, 'https://vm:2375/v1/gates/gate_1/verify', false],
    [PUBLIC_PAGE, 'https://ip6-localhost/v1/gates/gate_1/verify', false],
    [PUBLIC_PAGE, 'https://kubernetes/v1/gates/gate_1/verify', false],
    [PUBLIC_PAGE, 'https://kubernetes.default.svc/v1/gates/gate_1/verify', false],
    [PUBLIC_PAGE, 'https://metadata/v1/gates/gate_1/verify', false],
    [PUBLIC_PAGE, 'https://vault.service.consul/v1/gates/gate_1/verify', false],
    [PUBLIC_PAGE, 'https://host.ts.net/v1/gates/gate_1/verify', false],
    [LAN_PAGE, `https://${hostname()}:2375/v1/gates/gate_1/verify`, false],
    [LAN_PAGE, 'https://kubernetes.default.svc/v1/gates/gate_1/verify', true],
    // A local set-up: a page on loopback naming an API on loopback.
    ['http://127.0.0.1:3000/page', 'http://127.0.0.1:4000/v1/gates/gate_1/verify', true],
  ])('from a page at %s, %s is posted to: %s', async (pageUrl, verifyUrl, posted) => {
    const site = await startSite((request, response) => {
      if (paymentOf(request.headers)) return void response.writeHead(500).end('failed');
      response
        .writeHead(402, { 'content-type': 'application/json' })
        .end(JSON.stringify({ x402Version: 1, accepts: [v1()], verify_url: verifyUrl }));
    });
    // The page's origin is the site on loopback behind a routing fetch, as a page elsewhere would be.
    const pageOrigin = new URL(pageUrl).origin;
    const requested: string[] = [];
    const routing: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      requested.push(request.url);
      if (!request.url.startsWith(`${pageOrigin}/`)) throw new TypeError('fetch failed');
      const answer = await fetch(new Request(request.url.replace(pageOrigin, site.url), request));
      // Answered as the page's own URL, as a fetch of it would be.
      return Object.defineProperty(new Response(answer.body, answer), 'url', { value: request.url });
    };
    // A plain-http page off loopback is paid as payOverHttp allows, the documented way to pay one.
    const agent = agentWith({ fetch: routing, payOverHttp: true });
    expect((await agent.fetch(pageUrl)).status).toBe(500);
    expect(paymentsSent(site)).toHaveLength(1);
    expect(requested.filter((url) => !url.startsWith(`${pageOrigin}/`))).toEqual(posted ? [verifyUrl] : []);
    if (!posted) await expect(agent.profile()).rejects.toThrow(/API URL is unknown/);
  });
});

describe('the API the agent reads its history from', () => {
  const PROFILE = {
    address: account.address,
    payments_count: 0,
    total_spent_usd: '0',
    total_spent_amount: '0',
    first_payment_at: null,
    last_payment_at: null,
    sites_count: 0,
  };

  it('follows no redirect from it and reads no answer beyond a megabyte', async () => {
    const elsewhere = await startSite((_, response) => void response.writeHead(200).end('{}'));
    const redirecting = await startSite(
      (_, response) => void response.writeHead(302, { location: `${elsewhere.url}/v1/agents/me` }).end(),
    );
    await expect(agentWith({ apiUrl: redirecting.url }).profile()).rejects.toThrow(/\/v1\/agents\/me: 302/);
    expect(elsewhere.seen).toHaveLength(0);

    const huge = await startSite(
      (_, response) =>
        void response
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ ...PROFILE, padding: '0'.repeat(2 * 1024 * 1024) })),
    );
    await expect(agentWith({ apiUrl: huge.url }).profile()).rejects.toThrow(/not the one it documents/);
    const small = await startSite((_, response) => void response.writeHead(200).end(JSON.stringify(PROFILE)));
    expect(await agentWith({ apiUrl: small.url }).profile()).toEqual(PROFILE);
  });
});

/** A site answering every request with a Crawlgate-style 402 (a gate of its own in verify_url), on base. */
function gatedSite() {
  const gateId = signGate(
    {
      siteId: randomUUID(),
      ref: randomUUID(),
      path: '/page',
      micros: 1000n,
      chainId: 8453,
      asset: BASE_USDC,
      payTo: PAY_TO,
      iat: 1,
      exp: 4_000_000_000,
    },
    'any secret',
  );
  return startSite((_, response) => {
    response.writeHead(402, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        x402Version: 1,
        accepts: [v1()],
        verify_url: `https://api.example/v1/gates/${gateId}/verify`,
      }),
    );
  });
}

/**
 * A JSON-RPC node on loopback that is chain `chainId`, records the methods it is called with, and
 * drops the connection on a broadcast once it has it (the answer is lost, the transaction may be out).
 */
async function startNode(chainId: number, { estimateReverts = false } = {}) {
  const calls: string[] = [];
  const results: Record<string, unknown> = {
    eth_chainId: `0x${chainId.toString(16)}`,
    eth_getTransactionCount: '0x0',
    // No transaction it was sent is known to it (their answers were lost).
    eth_getTransactionReceipt: null,
    eth_getTransactionByHash: null,
    eth_estimateGas: '0x10000',
    eth_maxPriorityFeePerGas: '0x1',
    eth_gasPrice: '0x2',
    eth_getBlockByNumber: {
      number: '0x1',
      hash: `0x${'11'.repeat(32)}`,
      baseFeePerGas: '0x1',
      timestamp: '0x1',
      transactions: [],
    },
  };
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const call = JSON.parse(body) as { id: number; method: string };
      calls.push(call.method);
      if (call.method === 'eth_sendRawTransaction' || call.method === 'eth_sendTransaction')
        return void response.socket?.destroy();
      if (call.method === 'eth_estimateGas' && estimateReverts)
        return void response
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: call.id, error: { code: 3, message: 'execution reverted' } }));
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: call.id,
          result: call.method in results ? results[call.method] : '0x1',
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    /** What it answers each method with, changed as a test goes. */
    results,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('a cap on what one site takes (maxSpendPerSiteUsd)', () => {
  it('pays a site no more than its cap, pages fetched at once included, and tells it apart from the whole budget', async () => {
    const site = await payingSite({ v1: [v1()] });
    const agent = agentWith({ maxSpendPerSiteUsd: '0.002' });
    const outcomes = await Promise.all(
      [1, 2, 3, 4, 5].map((page) =>
        agent.fetch(`${site.url}/page-${page}`).then(
          (response) => response.status,
          (error: Error) => error,
        ),
      ),
    );
    expect(outcomes.filter((outcome) => outcome === 200)).toHaveLength(2);
    const refused = outcomes.filter((outcome): outcome is BudgetExceededError => outcome instanceof Error);
    expect(refused).toHaveLength(3);
    for (const error of refused) {
      expect(error).toBeInstanceOf(BudgetExceededError);
      expect(error).toMatchObject({ name: 'SiteBudgetExceededError', site: '127.0.0.1', remainingUsd: '0' });
    }
    expect(site.seen.filter((request) => paymentOf(request.headers))).toHaveLength(2);
    expect(agent.spent()).toMatchObject({ usd: '0.002', remainingUsd: '0.998' });
  });

  it('refuses a cap that is no amount, and one beside batchSettlement, whose vouchers it does not count (helper-447)', () => {
    expect(() => agentWith({ maxSpendPerSiteUsd: 'a lot' })).toThrow(/maxSpendPerSiteUsd/);
    expect(() => agentWith({ maxSpendPerSiteUsd: '0.01', batchSettlement: { depositUsd: '0.1' } })).toThrow(
      /maxSpendPerSiteUsd.*batchSettlement/,
    );
  });
});

describe('paying by transfer', () => {
  it('sends no USDC for a verify_url that names no gate, since no proof could be signed for it', async () => {
    const site = await startSite((_, response) => {
      response.writeHead(402, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          x402Version: 1,
          accepts: [v1()],
          verify_url: 'https://api.example/v1/gates/not-a-gate/verify',
        }),
      );
    });
    // No rpcUrl: reaching the transfer would fail with another error.
    await expect(agentWith({ payMode: 'transfer' }).fetch(`${site.url}/page`)).rejects.toBeInstanceOf(
      UnsupportedPaymentError,
    );
    expect(site.seen).toHaveLength(1);
  });

  it('sends nothing when its rpcUrl is on another chain than the one the site asks to be paid on', async () => {
    // A JSON-RPC node on loopback that is chain 31337; the site asks for USDC on base (8453).
    const node = await startNode(31337);
    try {
      const site = await gatedSite();
      const agent = agentWith({ payMode: 'transfer', rpcUrl: node.url, networks: ['base'] });
      await expect(agent.fetch(`${site.url}/page`)).rejects.toMatchObject({ reason: 'wrong_chain' });
      expect(node.calls).not.toContain('eth_sendRawTransaction');
      expect(node.calls).not.toContain('eth_sendTransaction');
      expect(agent.spent()).toMatchObject({ usd: '0', payments: 0 });
    } finally {
      await node.close();
    }
  });
});

describe('a payment whose outcome is unknown stays counted against the budget', () => {
  // The site holds the signed authorization: it (or its reconciler) can still settle it after the
  // agent gave up, so freeing the reservation would let the next page be paid beyond the budget.
  it('spends nothing on a transfer the token would refuse: it fails at its estimate, unsent', async () => {
    const node = await startNode(8453, { estimateReverts: true });
    try {
      const site = await gatedSite();
      const agent = agentWith({ payMode: 'transfer', rpcUrl: node.url, networks: ['base'], budgetUsd: '0.002' });
      for (let i = 0; i < 3; i++) await expect(agent.fetch(`${site.url}/page`)).rejects.toThrow(/not sent/);
      expect(node.calls).not.toContain('eth_sendRawTransaction');
      expect(agent.spent()).toMatchObject({ usd: '0', remainingUsd: '0.002' });
    } finally {
      await node.close();
    }
  });

  it('counts a transfer whose broadcast got no answer: it may have paid, so it stays spent', async () => {
    const node = await startNode(8453);
    try {
      const site = await gatedSite();
      const agent = agentWith({ payMode: 'transfer', rpcUrl: node.url, networks: ['base'], budgetUsd: '0.001' });
      await expect(agent.fetch(`${site.url}/page`)).rejects.toThrow();
      expect(node.calls).toContain('eth_sendRawTransaction');
      expect(agent.spent().remainingUsd).toBe('0');
      // So no second page is paid beyond the budget.
      await expect(agent.fetch(`${site.url}/other`)).rejects.toMatchObject({ name: 'BudgetExceededError' });
      expect(node.calls.filter((method) => method === 'eth_sendRawTransaction')).toHaveLength(1);
    } finally {
      await node.close();
    }
  });

  it('sends no second transfer for a page while the first one’s broadcast has no known outcome, however much budget is left (helper-440)', async () => {
    const node = await startNode(8453);
    try {
      const site = await gatedSite();
      // A key the agent signs with itself, and one a WalletClient's node holds (eth_sendTransaction).
      const local = agentWith({ payMode: 'transfer', rpcUrl: node.url, networks: ['base'] });
      const remote = agentWith({
        payMode: 'transfer',
        networks: ['base'],
        account: createWalletClient({ account: account.address, transport: http(node.url) }),
      });
      for (const agent of [local, remote]) {
        await expect(agent.fetch(`${site.url}/page`)).rejects.toThrow();
        for (let again = 0; again < 2; again++)
          await expect(agent.fetch(`${site.url}/page`)).rejects.toMatchObject({ reason: 'transfer_unproven' });
        expect(agent.spent()).toMatchObject({ micros: 1000n, payments: 1 });
      }
      expect(node.calls.filter((method) => method === 'eth_sendRawTransaction')).toHaveLength(1);
      expect(node.calls.filter((method) => method === 'eth_sendTransaction')).toHaveLength(1);
      // Its hold over, still pending: not paid again (helper-444).
      jest.useFakeTimers({ advanceTimers: true, now: Date.now() + 3 * 3_600_000 });
      await expect(local.fetch(`${site.url}/page`)).rejects.toMatchObject({ reason: 'transfer_unproven' });
      jest.useRealTimers();
      expect(node.calls.filter((method) => method === 'eth_sendRawTransaction')).toHaveLength(1);
      // Another transaction took its nonce, and it has no receipt: it can never be mined, and the page is paid anew.
      node.results.eth_getTransactionCount = '0x1';
      await expect(local.fetch(`${site.url}/page`)).rejects.toThrow();
      expect(node.calls.filter((method) => method === 'eth_sendRawTransaction')).toHaveLength(2);
      // The WalletClient's: its wallet picks the nonce (some ignore one given), so nothing says it can
      // no longer be mined: its page waits, the nonce count past it or not (helper-447).
      await expect(remote.fetch(`${site.url}/page`)).rejects.toMatchObject({ reason: 'transfer_unproven' });
      expect(node.calls.filter((method) => method === 'eth_sendTransaction')).toHaveLength(1);
    } finally {
      await node.close();
    }
  });

  it('counts a settlement still pending after every retry, and pays no second page beyond the budget', async () => {
    const site = await startSite((request, response) => {
      if (!paymentOf(request.headers)) return ask(response, { v1: [v1()], v2: [v2()] });
      response.writeHead(503, { 'retry-after': '0' }).end('settlement pending');
    });
    const agent = agentWith({ budgetUsd: '0.001' });
    await expect(agent.fetch(`${site.url}/one`)).rejects.toMatchObject({ name: 'PaymentFailedError' });
    expect(agent.spent()).toMatchObject({ micros: 1000n, remainingUsd: '0' });
    await expect(agent.fetch(`${site.url}/two`)).rejects.toMatchObject({ name: 'BudgetExceededError' });
    expect(paymentsSent(site)).toHaveLength(7); // the first page's payment, sent again on each retry; none for /two
    expect(new Set(paymentsSent(site).map((payment) => payment.payload.authorization.nonce)).size).toBe(1);
  }, 30_000);

  it('counts a payment whose answer never came (connection dropped after the payment was sent)', async () => {
    const site = await startSite((request, response) => {
      if (!paymentOf(request.headers)) return ask(response, { v1: [v1()], v2: [v2()] });
      response.socket?.destroy();
    });
    const unconfirmed: UnconfirmedPaymentEvent[] = [];
    const agent = agentWith({ budgetUsd: '0.001', onUnconfirmedPayment: (event) => unconfirmed.push(event) });
    await expect(agent.fetch(`${site.url}/one`)).rejects.toThrow();
    // Said to the caller, who would otherwise see only a dropped connection.
    expect(unconfirmed).toEqual([
      expect.objectContaining({ url: `${site.url}/one`, amount: '1000', payTo: PAY_TO, status: 'unknown' }),
    ]);
    await expect(agent.fetch(`${site.url}/two`)).rejects.toMatchObject({ name: 'BudgetExceededError' });
    expect(paymentsSent(site)).toHaveLength(1);
    expect(unconfirmed).toHaveLength(1);
  });

  it('keeps a refused authorization reserved: the site holds it and could still settle it', async () => {
    const site = await startSite((request, response) => {
      if (!paymentOf(request.headers)) return ask(response, { v1: [v1()], v2: [v2()] });
      response
        .writeHead(402, {
          'payment-response': encodeBase64Json({
            success: false,
            errorReason: 'invalid_exact_evm_payload_signature',
            transaction: '',
          }),
        })
        .end('{}');
    });
    const unconfirmed: UnconfirmedPaymentEvent[] = [];
    const agent = agentWith({ budgetUsd: '0.001', onUnconfirmedPayment: (event) => unconfirmed.push(event) });
    await expect(agent.fetch(`${site.url}/one`)).rejects.toMatchObject({ name: 'PaymentFailedError' });
    expect(agent.spent()).toMatchObject({ micros: 0n, payments: 0, remainingUsd: '0', reservedUsd: '0.001' });
    expect(unconfirmed).toEqual([
      expect.objectContaining({ url: `${site.url}/one`, priceUsd: '0.001', payTo: PAY_TO, status: 'held' }),
    ]);
    // No second authorization: the budget is the most a site can take, refusals included.
    await expect(agent.fetch(`${site.url}/two`)).rejects.toMatchObject({ name: 'BudgetExceededError' });
    expect(paymentsSent(site)).toHaveLength(1);
  });
});

/** A 402 naming `verifyUrl` as the gate's verify_url (in the v1 body), with a v2 offer too. */
function askWithVerifyUrl(response: ServerResponse, verifyUrl: string, headers: Record<string, string> = {}): void {
  response
    .writeHead(402, {
      'content-type': 'application/json',
      'payment-required': encodeBase64Json({ x402Version: 2, resource: { url: 'http://site/page' }, accepts: [v2()] }),
      ...headers,
    })
    .end(JSON.stringify({ x402Version: 1, accepts: [v1()], verify_url: verifyUrl }));
}

describe('a payment whose answer is lost or still pending is asked of the gate, never paid again', () => {
  const now = Math.floor(Date.now() / 1000);
  const token = signAccessToken(
    { gate_id: 'gate_v2', site_id: 'site_1', url: '/page', kid: 'k1', iat: now, exp: now + 600 },
    'secret',
  );

  it('asks verify_url for the token once the settlement is still pending after the retries, and reads the page with it; fetches waiting on it too', async () => {
    const site = await startSite((request, response, self) => {
      if (request.url === '/v1/gates/gate_1/verify')
        return void response
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ status: 'paid', access_token: token }));
      if (paymentOf(request.headers)) return void response.writeHead(503, { 'retry-after': '0' }).end('pending');
      if (request.headers['x-crawlgate-token'] === token) return void response.end('the page');
      askWithVerifyUrl(response, `${self.url}/v1/gates/gate_1/verify`);
    });
    const agent = agentWith();
    const pages = await Promise.all([1, 2].map(async () => (await agent.fetch(`${site.url}/page`)).text()));
    expect(pages).toEqual(['the page', 'the page']);
    expect(new Set(paymentsSent(site).map((payment) => payment.payload.authorization.nonce)).size).toBe(1);
    const posted = site.seen.filter((seen) => seen.path === '/v1/gates/gate_1/verify');
    expect(posted).toHaveLength(1);
    expect(JSON.parse(posted[0].body)).toEqual({ payment: paymentsSent(site)[0] });
    expect(agent.spent()).toMatchObject({ micros: 1000n, payments: 1 });
  }, 30_000);

  /**
   * A fetch of the site's /page whose caller gives up after `giveUpMs` (it fails with its TimeoutError),
   * another started while it is out, and the next one: what those two read.
   */
  async function othersWhileTheCallerGivesUp(agent: ReturnType<typeof agentWith>, site: Site, giveUpMs: number) {
    const leader = agent.fetch(`${site.url}/page`, { signal: AbortSignal.timeout(giveUpMs) });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const follower = agent.fetch(`${site.url}/page`);
    await expect(leader).rejects.toMatchObject({ name: 'TimeoutError' });
    return [await (await follower).text(), await (await agent.fetch(`${site.url}/page`)).text()];
  }

  it('pays once for a page whose caller gave up while the gate settled it: one waiting on it, and the next fetch, read it with that payment’s token', async () => {
    let settled = false;
    const site = await startSite((request, response, self) => {
      if (request.url === '/v1/gates/gate_1/verify')
        return void response
          .writeHead(settled ? 200 : 402, { 'content-type': 'application/json' })
          .end(JSON.stringify(settled ? { status: 'paid', access_token: token } : { reason: 'invalid_payload' }));
      if (paymentOf(request.headers)) {
        // A slow gate: it settles at once and answers after the caller's signal has fired.
        settled = true;
        return void setTimeout(() => response.writeHead(200, { 'x-crawlgate-token': token }).end('the page'), 1_500);
      }
      if (request.headers['x-crawlgate-token'] === token) return void response.end('the page');
      askWithVerifyUrl(response, `${self.url}/v1/gates/gate_1/verify`);
    });
    const agent = agentWith();
    expect(await othersWhileTheCallerGivesUp(agent, site, 500)).toEqual(['the page', 'the page']);
    expect(paymentsSent(site)).toHaveLength(1);
  }, 30_000);

  it('learns the answer to a payment whose caller gave up while it was out, where no verify_url could give it again: one waiting on it, and the next fetch, read the page with its token', async () => {
    const site = await startSite((request, response) => {
      // A slow site naming no verify_url: its answer is the only word on the payment.
      if (paymentOf(request.headers))
        return void setTimeout(() => response.writeHead(200, { 'x-crawlgate-token': token }).end('the page'), 1_500);
      if (request.headers['x-crawlgate-token'] === token) return void response.end('the page');
      ask(response, { v2: [v2()] });
    });
    const agent = agentWith();
    expect(await othersWhileTheCallerGivesUp(agent, site, 500)).toEqual(['the page', 'the page']);
    expect(paymentsSent(site)).toHaveLength(1);
    expect(agent.spent()).toMatchObject({ micros: 1000n, payments: 1 });
  }, 30_000);

  it('sends a pending payment again whose caller gave up while it waited, where no verify_url could say: one waiting on it, and the next fetch, read the page with its token', async () => {
    let sends = 0;
    const site = await startSite((request, response) => {
      if (paymentOf(request.headers))
        return void (sends++ === 0
          ? response
              .writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' })
              .end(JSON.stringify({ status: 'settlement_pending' }))
          : response.writeHead(200, { 'x-crawlgate-token': token }).end('the page'));
      if (request.headers['x-crawlgate-token'] === token) return void response.end('the page');
      ask(response, { v2: [v2()] });
    });
    const agent = agentWith();
    // The caller gives up while the agent waits out the pending answer's Retry-After.
    expect(await othersWhileTheCallerGivesUp(agent, site, 400)).toEqual(['the page', 'the page']);
    expect(new Set(paymentsSent(site).map((payment) => payment.payload.authorization.nonce)).size).toBe(1);
    expect(agent.spent()).toMatchObject({ micros: 1000n, payments: 1 });
  }, 30_000);

  it('rejects a fetch whose caller had given up with the caller’s own reason, as fetch does', async () => {
    const site = await startSite((_, response) => response.end('free'));
    const mine = new Error('the caller gave up');
    await expect(agentWith().fetch(`${site.url}/free`, { signal: AbortSignal.abort(mine) })).rejects.toBe(mine);
    expect(site.seen).toHaveLength(0);
  });

  it('sends no payment, and asks no verify_url, for a caller that gave up before its payment left', async () => {
    const verifier = await startSite((_, response) => {
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ status: 'paid', access_token: token }));
    });
    const site = await startSite((_, response) => askWithVerifyUrl(response, `${verifier.url}/v1/gates/gate_1/verify`));
    // The caller gives up while the agent signs (a remote signer's wait, say).
    const caller = new AbortController();
    const signing: typeof account = {
      ...account,
      signTypedData: async (typed) => {
        caller.abort();
        return account.signTypedData(typed);
      },
    };
    const agent = agentWith({ account: signing });
    await expect(agent.fetch(`${site.url}/page`, { signal: caller.signal })).rejects.toMatchObject({
      name: 'AbortError',
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(paymentsSent(site)).toHaveLength(0);
    expect(verifier.seen).toHaveLength(0);
    expect(agent.spent()).toMatchObject({ micros: 0n, payments: 0 });
  });

  it('reports a payment whose token its gate gave as paid only, when the read with that token fails too', async () => {
    const site = await startSite((request, response, self) => {
      if (request.url === '/v1/gates/gate_1/verify')
        return void response
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ status: 'paid', access_token: token }));
      if (paymentOf(request.headers) || request.headers['x-crawlgate-token']) return void response.socket?.destroy();
      askWithVerifyUrl(response, `${self.url}/v1/gates/gate_1/verify`);
    });
    const paid: unknown[] = [];
    const unconfirmed: UnconfirmedPaymentEvent[] = [];
    const agent = agentWith({
      onPayment: (event) => paid.push(event),
      onUnconfirmedPayment: (event) => unconfirmed.push(event),
    });
    await expect(agent.fetch(`${site.url}/page`)).rejects.toThrow();
    expect(paid).toHaveLength(1);
    expect(unconfirmed).toEqual([]);
  });

  it('says which payment a later confirmation confirms: one reported unconfirmed is reported paid once, as that payment', async () => {
    let apiKnows = false;
    const site = await startSite((request, response, self) => {
      if (request.url === '/v1/gates/gate_1/verify')
        return void (apiKnows
          ? response
              .writeHead(200, { 'content-type': 'application/json' })
              .end(JSON.stringify({ status: 'paid', access_token: token }))
          : response.writeHead(503).end());
      if (request.headers['x-crawlgate-token'] === token) return void response.writeHead(200).end('the page');
      if (paymentOf(request.headers)) return void response.socket?.destroy();
      askWithVerifyUrl(response, `${self.url}/v1/gates/gate_1/verify`);
    });
    const paid: PaymentEvent[] = [];
    const unconfirmed: UnconfirmedPaymentEvent[] = [];
    const agent = agentWith({
      onPayment: (event) => paid.push(event),
      onUnconfirmedPayment: (event) => unconfirmed.push(event),
    });
    await expect(agent.fetch(`${site.url}/page`)).rejects.toThrow();
    expect(unconfirmed).toEqual([expect.objectContaining({ url: `${site.url}/page`, status: 'unknown' })]);
    expect(paid).toEqual([]);
    apiKnows = true;
    expect(await (await agent.fetch(`${site.url}/page?again`)).text()).toBe('the page');
    expect(paid).toEqual([
      expect.objectContaining({
        url: `${site.url}/page?again`,
        confirms: { url: `${site.url}/page`, status: 'unknown' },
      }),
    ]);
    expect(paymentsSent(site)).toHaveLength(1);
    expect(agent.spent()).toMatchObject({ micros: 1000n });
  });

  it('fails the fetches waiting on a payment whose answer was lost, with no token to be had, rather than pay again', async () => {
    const site = await startSite((request, response) => {
      if (!paymentOf(request.headers)) return ask(response, { v1: [v1()], v2: [v2()] });
      response.socket?.destroy();
    });
    const agent = agentWith();
    const outcomes = await Promise.allSettled([1, 2, 3].map(() => agent.fetch(`${site.url}/page`)));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(paymentsSent(site)).toHaveLength(1);
    expect(agent.spent()).toMatchObject({ micros: 1000n });
  });

  // A plain x402 site names no verify_url: nothing can be asked, so the page waits for its
  // authorization to be over (the chain says whether it was used) rather than be paid again.
  it.each([
    ['answers 500', (response: ServerResponse) => void response.writeHead(500).end('oops')],
    ['drops the connection', (response: ServerResponse) => void response.socket?.destroy()],
    [
      'says duplicate_settlement',
      (response: ServerResponse) =>
        void response
          .writeHead(402, {
            'payment-response': encodeBase64Json({
              success: false,
              errorReason: 'duplicate_settlement',
              transaction: '',
            }),
          })
          .end('{}'),
    ],
  ])('pays once for a page whose site %s to every payment and names no verify_url', async (_, fail) => {
    const site = await startSite((request, response) => {
      if (!paymentOf(request.headers)) return ask(response, { v1: [v1()], v2: [v2()] });
      fail(response);
    });
    const agent = agentWith();
    for (let i = 0; i < 4; i++) await agent.fetch(`${site.url}/page`).catch(() => undefined);
    expect(paymentsSent(site)).toHaveLength(1);
    await expect(agent.fetch(`${site.url}/page`)).rejects.toMatchObject({ reason: 'payment_unconfirmed' });
    expect(agent.spent()).toMatchObject({ micros: 1000n });
    // Its other pages are paid: the doubt is this page's (and counts against the host's cap).
    await agent.fetch(`${site.url}/other`).catch(() => undefined);
    expect(paymentsSent(site)).toHaveLength(2);
  });

  // A refusal from the gate's API says no token will come, not that the money stayed: the site got
  // the authorization and can settle it (to a payTo of its choosing) until it expires. Whoever's API
  // it is: a site can copy a real gate's 402, its verify_url included, and put its own payTo in it.
  it('believes no refusal from a verify_url, the apiUrl the agent was given included: the page waits for the authorization to be over', async () => {
    const site = await startSite((request, response, self) => {
      if (request.url === '/v1/gates/gate_1/verify')
        return void response
          .writeHead(400, { 'content-type': 'application/json' })
          .end(JSON.stringify({ detail: 'no such payment' }));
      if (!paymentOf(request.headers)) return askWithVerifyUrl(response, `${self.url}/v1/gates/gate_1/verify`);
      response.writeHead(500).end('oops');
    });
    for (const agent of [agentWith(), agentWith({ apiUrl: site.url })]) {
      const sentBefore = paymentsSent(site).length;
      for (let i = 0; i < 3; i++) await agent.fetch(`${site.url}/page`).catch(() => undefined);
      await expect(agent.fetch(`${site.url}/page`)).rejects.toMatchObject({ reason: 'payment_unconfirmed' });
      expect(paymentsSent(site).length - sentBefore).toBe(1);
    }
  });

  it('stops waiting on a verify_url that never answers when the caller aborts, and so do fetches waiting on that payment', async () => {
    const hung: ServerResponse[] = [];
    const verifier = await startSite((_, response) => void hung.push(response));
    const site = await startSite((request, response) => {
      if (paymentOf(request.headers)) return void response.socket?.destroy();
      askWithVerifyUrl(response, `${verifier.url}/v1/gates/gate_1/verify`);
    });
    const agent = agentWith();
    try {
      const outcomes = await Promise.allSettled(
        [1, 2].map(() => agent.fetch(`${site.url}/page`, { signal: AbortSignal.timeout(1_000) })),
      );
      expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
      expect(paymentsSent(site)).toHaveLength(1);
      expect(verifier.seen).toHaveLength(1);
    } finally {
      for (const response of hung) response.socket?.destroy();
    }
  }, 20_000);

  it('counts a payment whose paid request could not connect, and asks its verify_url: fetch may have sent it on an earlier connection (after a 421)', async () => {
    const verifier = await startSite((_, response) => {
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ status: 'paid', access_token: token }));
    });
    // The site stops listening once it has asked: the paid request finds no one to connect to.
    const site = await startSite((_, response, self) => {
      askWithVerifyUrl(response, `${verifier.url}/v1/gates/gate_1/verify`, { connection: 'close' });
      void self.close();
    });
    const agent = agentWith({ budgetUsd: '0.001' });
    await expect(agent.fetch(`${site.url}/page`)).rejects.toMatchObject({ cause: { code: 'ECONNREFUSED' } });
    expect(site.seen).toHaveLength(1);
    expect(verifier.seen).toHaveLength(1);
    expect(agent.spent()).toMatchObject({ micros: 1000n, remainingUsd: '0' });
  });

  it('counts a payment whose paid request a caller’s retrying fetch hid: the site had it, though the last attempt could not connect', async () => {
    // The agent sees one call that failed at connect; the caller's fetch had sent the payment before.
    const retrying: typeof fetch = (input, init) => fetch(input, init).catch(() => fetch(input, init));
    const site = await startSite((request, response, self) => {
      if (!paymentOf(request.headers)) return ask(response, { v1: [v1()], v2: [v2()] });
      response.socket?.destroy();
      void self.close();
    });
    const agent = agentWith({ budgetUsd: '0.001', fetch: retrying });
    await expect(agent.fetch(`${site.url}/page`)).rejects.toMatchObject({ cause: { code: 'ECONNREFUSED' } });
    expect(paymentsSent(site)).toHaveLength(1);
    expect(agent.spent()).toMatchObject({ micros: 1000n, remainingUsd: '0' });
  });

  it('counts a payment the site read and answered 421: fetch sends it again on a new connection, which a site that stopped listening refuses', async () => {
    const site = await startSite((request, response, self) => {
      // The 402's connection is not kept: the paid request comes on a connection of its own.
      if (!paymentOf(request.headers))
        return ask(response.setHeader('connection', 'close'), { v1: [v1()], v2: [v2()] });
      response.writeHead(421, { 'content-length': '0' }).end();
      void self.close();
    });
    const agent = agentWith({ budgetUsd: '0.001' });
    await expect(agent.fetch(`${site.url}/page`)).rejects.toThrow();
    expect(paymentsSent(site)).toHaveLength(1);
    expect(agent.spent()).toMatchObject({ micros: 1000n, remainingUsd: '0' });
  });

  it('counts a payment whose paid request a retrying dispatcher hid: the site had it, though the last attempt could not connect', async () => {
    // undici's RetryAgent resends a GET whose socket closed; the agent's fetch is called once and fails at connect.
    const dispatcher = new RetryAgent(new Dispatcher(), { maxRetries: 1, minTimeout: 10 });
    const site = await startSite((request, response, self) => {
      if (!paymentOf(request.headers)) return ask(response, { v1: [v1()], v2: [v2()] });
      response.socket?.destroy();
      void self.close();
    });
    const agent = agentWith({ budgetUsd: '0.001' });
    await expect(agent.fetch(`${site.url}/page`, { dispatcher } as RequestInit)).rejects.toMatchObject({
      cause: { code: 'ECONNREFUSED' },
    });
    expect(paymentsSent(site)).toHaveLength(1);
    expect(agent.spent()).toMatchObject({ micros: 1000n, remainingUsd: '0' });
    await dispatcher.close();
  });

  it('counts a payment whose paid request was redirected to a host that refuses connections: the site had it', async () => {
    const gone = await startSite((_, response) => void response.end());
    await gone.close();
    const site = await startSite((request, response) => {
      if (paymentOf(request.headers)) return void response.writeHead(302, { location: `${gone.url}/page` }).end();
      ask(response, { v1: [v1()], v2: [v2()] });
    });
    const agent = agentWith({ budgetUsd: '0.001' });
    await expect(agent.fetch(`${site.url}/page`)).rejects.toMatchObject({ cause: { code: 'ECONNREFUSED' } });
    expect(agent.spent()).toMatchObject({ micros: 1000n, remainingUsd: '0' });
    // The page waits for that payment to be over; another page finds the budget spent.
    await expect(agent.fetch(`${site.url}/page`)).rejects.toMatchObject({ reason: 'payment_unconfirmed' });
    await expect(agent.fetch(`${site.url}/other`)).rejects.toMatchObject({ name: 'BudgetExceededError' });
    expect(paymentsSent(site)).toHaveLength(1);
  });
});

/*
 * A page over plain http from a host off loopback: anyone on the network between can rewrite its
 * 402 to name their own payTo. "crawled.test" is such a host, its requests sent to a site on loopback.
 */
describe('pages over plain http', () => {
  const OFF_LOOPBACK = 'crawled.test';
  /** fetch, with crawled.test sent to loopback: the agent sees a host off loopback, a real server answers. */
  const routed: typeof fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.hostname === OFF_LOOPBACK) url.hostname = '127.0.0.1';
    return fetch(url, init);
  };
  const offLoopback = (site: Site) => site.url.replace('127.0.0.1', OFF_LOOPBACK);

  it('pays nothing for a 402 that came over plain http off loopback, and says why', async () => {
    const site = await payingSite({ v1: [v1()], v2: [v2()] });
    const agent = agentWith({ fetch: routed });
    const refusal = agent.fetch(`${offLoopback(site)}/page`);
    await expect(refusal).rejects.toBeInstanceOf(InsecureConnectionError);
    await expect(refusal).rejects.toThrow(/plain http/);
    expect(site.seen).toHaveLength(1);
    expect(paymentsSent(site)).toHaveLength(0);
    expect(agent.spent()).toMatchObject({ usd: '0', payments: 0 });
  });

  it('pays nothing when a redirect on the way came over plain http off loopback, to a page on loopback too', async () => {
    // The redirect itself could have been rewritten to send the agent to a site of the attacker's.
    const paying = await payingSite({ v1: [v1()] });
    const bouncing = await startSite(
      (_, response) => void response.writeHead(302, { location: `${paying.url}/page` }).end(),
    );
    const agent = agentWith({ fetch: routed });
    await expect(agent.fetch(`${offLoopback(bouncing)}/page`)).rejects.toBeInstanceOf(InsecureConnectionError);
    expect(paying.seen).toHaveLength(1);
    expect(paymentsSent(paying)).toHaveLength(0);
  });

  it('pays such a page when payOverHttp allows it (a network the agent trusts)', async () => {
    const site = await payingSite({ v1: [v1()] });
    const agent = agentWith({ fetch: routed, payOverHttp: true });
    const response = await agent.fetch(`${offLoopback(site)}/page`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('paid');
    expect(paymentsSent(site)).toHaveLength(1);
  });

  it('still pays plain http on loopback (a local set-up) and fetches unpaid pages off loopback as they are', async () => {
    const local = await payingSite({ v1: [v1()] });
    expect((await agentWith().fetch(`${local.url}/page`)).status).toBe(200);
    const free = await startSite((_, response) => void response.writeHead(200).end('free'));
    expect(await (await agentWith({ fetch: routed }).fetch(`${offLoopback(free)}/page`)).text()).toBe('free');
  });
});
