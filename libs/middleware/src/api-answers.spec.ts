import type { ChannelStateView, PaidGate, RefundedChannel, SiteOffer, SiwxAccess } from '@crawlgate/core';
import {
  errorDetailOf,
  paidGateOf,
  pendingOf,
  refundedOf,
  rejectionOf,
  siteOfferOf,
  siwxAccessOf,
} from './api-answers';
import { createApiClient, CrawlgateApiError } from './api-client';

const GATE = 'gate-id-as-signed';
const CHANNEL: ChannelStateView = {
  channelId: `0x${'c'.repeat(64)}`,
  balance: '1000000',
  totalClaimed: '0',
  withdrawRequestedAt: 0,
  refundNonce: '0',
  chargedCumulativeAmount: '20000',
};
const PAID: PaidGate = {
  status: 'paid',
  access_token: 'a.b',
  expires_at: '2026-11-23T23:00:00.000Z',
  gate_id: GATE,
  url: '/post/1',
  tx_hash: '0xabc',
  payer: '0xpayer',
  amount: '10000',
  price_usd: '0.01',
  network: 'base',
};
const VOUCHER = {
  channel_id: CHANNEL.channelId,
  charged_amount: '10000',
  channel_state: CHANNEL,
  deposit_tx_hash: null,
  deposit_amount: null,
};
const SITE: SiteOffer = {
  site_id: 's',
  domain: 'example.com',
  default_price_usd: '0.01',
  rules: [{ path: '/free/*', price_usd: '0' }],
  pricing_version: 3,
  network: 'base',
  caip2: 'eip155:8453',
  chain_id: 8453,
  asset: '0x0000000000000000000000000000000000000001',
  x402_network: 'base',
  asset_name: 'USD Coin',
  asset_version: '2',
  pay_to: null,
  gate_ttl_seconds: 900,
  settlement_timeout_seconds: 30,
  max_url_length: 2048,
  api_base_url: 'https://api.example',
  batch_settlement: null,
};

describe('paidGateOf', () => {
  it('reads a whole payment of the gate asked about, with or without a voucher, ignoring fields core does not name', () => {
    expect(paidGateOf(PAID, GATE)).toEqual(PAID);
    expect(paidGateOf({ ...PAID, batch_settlement: VOUCHER }, GATE)).toMatchObject({ batch_settlement: VOUCHER });
    expect(paidGateOf({ ...PAID, something_new: 1 }, GATE)).toEqual(PAID);
    const extra = { ...VOUCHER, note: 'x', channel_state: { ...CHANNEL, injected: '<script>' } };
    expect(paidGateOf({ ...PAID, batch_settlement: extra }, GATE)).toEqual({ ...PAID, batch_settlement: VOUCHER });
  });

  it.each([
    ['null', null],
    ['a list', [PAID]],
    ['another gate', { ...PAID, gate_id: 'other' }],
    ['another status', { ...PAID, status: 'settlement_pending' }],
    ['an empty token', { ...PAID, access_token: '' }],
    ['a missing token', { ...PAID, access_token: undefined }],
    ['a number for a string', { ...PAID, tx_hash: 1 }],
    ['a null payer', { ...PAID, payer: null }],
    ['an amount of the wrong form', { ...PAID, amount: '1.5' }],
    ['a price of the wrong form', { ...PAID, price_usd: 'USD 1' }],
    ['a voucher with a null channel_state', { ...PAID, batch_settlement: { ...VOUCHER, channel_state: null } }],
    ['a voucher with a float charge', { ...PAID, batch_settlement: { ...VOUCHER, charged_amount: '0.5' } }],
    ['a voucher whose deposit is a number', { ...PAID, batch_settlement: { ...VOUCHER, deposit_amount: 5 } }],
    [
      'a channel whose withdrawal time is a string',
      { ...PAID, batch_settlement: { ...VOUCHER, channel_state: { ...CHANNEL, withdrawRequestedAt: '0' } } },
    ],
  ])('refuses %s', (_name, body) => {
    expect(paidGateOf(body, GATE)).toBeUndefined();
  });
});

describe('pendingOf', () => {
  const pending = { status: 'settlement_pending', gate_id: GATE, tx_hash: null, detail: 'wait' };
  it('reads the pending payment of the gate asked about, and nothing else', () => {
    expect(pendingOf({ ...pending, access_token: 'a.b' }, GATE)).toEqual(pending);
    expect(pendingOf({ ...pending, tx_hash: '0xabc' }, GATE)).toBeDefined();
    for (const body of [
      null,
      { ...pending, gate_id: 'other' },
      { ...pending, status: 'paid' },
      { ...pending, tx_hash: 7 },
      { ...pending, detail: undefined },
    ])
      expect(pendingOf(body, GATE)).toBeUndefined();
  });
});

describe('rejectionOf', () => {
  const reason = 'invalid_batch_settlement_evm_cumulative_amount_mismatch';
  const voucher = { signedMaxClaimable: '10000', signature: `0x${'ab'.repeat(65)}` };

  it('reads a refusal, and x402’s correction only when its channel (and voucher) state is whole', () => {
    expect(rejectionOf({ detail: 'no', reason: 'invalid_payload' })).toEqual({
      detail: 'no',
      reason: 'invalid_payload',
    });
    expect(rejectionOf({ detail: 'behind', reason, channel_state: CHANNEL })).toEqual({
      detail: 'behind',
      reason,
      correction: { reason, channelState: CHANNEL },
    });
    expect(
      rejectionOf({ detail: 'behind', reason, channel_state: { ...CHANNEL, extra: 1 }, voucher_state: voucher }),
    ).toEqual({
      detail: 'behind',
      reason,
      correction: { reason, channelState: CHANNEL, voucherState: voucher },
    });
  });

  it.each([
    ['null', null],
    ['no reason', { detail: 'no' }],
    ['a list for a detail', { detail: ['no'], reason: 'invalid_payload' }],
    ['a channel state that is a string', { detail: 'd', reason, channel_state: 'x' }],
    ['a channel state missing a field', { detail: 'd', reason, channel_state: { ...CHANNEL, refundNonce: undefined } }],
    ['a channel id that is short', { detail: 'd', reason, channel_state: { ...CHANNEL, channelId: '0x12' } }],
    ['a negative total', { detail: 'd', reason, channel_state: { ...CHANNEL, chargedCumulativeAmount: '-1' } }],
    ['a voucher state alone', { detail: 'd', reason, voucher_state: voucher }],
    ['a null voucher state', { detail: 'd', reason, channel_state: CHANNEL, voucher_state: null }],
    [
      'a voucher signature that is not hex',
      { detail: 'd', reason, channel_state: CHANNEL, voucher_state: { ...voucher, signature: 'sig' } },
    ],
  ])('refuses %s', (_name, body) => {
    expect(rejectionOf(body)).toBeUndefined();
  });
});

describe('errorDetailOf', () => {
  it('reads a sentence, not a list nor another type', () => {
    expect(errorDetailOf({ detail: 'used' })).toBe('used');
    for (const body of [null, 'used', { detail: [{ msg: 'x' }] }, { detail: 3 }, {}])
      expect(errorDetailOf(body)).toBeUndefined();
  });
});

describe('siwxAccessOf', () => {
  const access: SiwxAccess = { access_token: 'a.b', expires_at: 'soon', url: '/post/1', payer: '0xpayer' };
  it('reads the token again, and refuses an answer without a whole one', () => {
    expect(siwxAccessOf(access)).toEqual(access);
    for (const body of [
      null,
      { ...access, access_token: '' },
      { ...access, access_token: 5 },
      { ...access, url: undefined },
    ])
      expect(siwxAccessOf(body)).toBeUndefined();
  });
});

describe('siteOfferOf', () => {
  it('reads the site’s terms, with or without batch-settlement terms and a bot policy', () => {
    expect(siteOfferOf({ ...SITE, secret: 'never passed on' })).toEqual(SITE);
    const batch = { escrow: '0xe', receiver_authorizer: '0xr', withdraw_delay_seconds: 86400 };
    expect(siteOfferOf({ ...SITE, batch_settlement: batch })).toMatchObject({ batch_settlement: batch });
    expect(siteOfferOf({ ...SITE, batch_settlement: undefined, bot_policy: { version: 1 } })).toBeDefined();
    const usable = [
      { fingerprint: 'fp1', retires_at: null },
      { fingerprint: 'fp2', retires_at: '2026-11-28T04:00:00.000Z' },
    ];
    expect(siteOfferOf({ ...SITE, usable_secrets: usable })).toMatchObject({ usable_secrets: usable });
    expect(
      siteOfferOf({ ...SITE, usable_secrets: [{ ...usable[0], secret: 'never passed on' }] })?.usable_secrets,
    ).toEqual([usable[0]]);
    expect(siteOfferOf({ ...SITE, usable_secrets: [] })).toMatchObject({ usable_secrets: [] });
    expect(siteOfferOf({ ...SITE, access_token_ttl_seconds: 60 })).toMatchObject({ access_token_ttl_seconds: 60 });
  });

  it.each([
    ['null', null],
    ['no domain', { ...SITE, domain: undefined }],
    ['a chain id that is a string', { ...SITE, chain_id: '8453' }],
    ['a fractional gate lifetime', { ...SITE, gate_ttl_seconds: 1.5 }],
    ['a negative settlement timeout', { ...SITE, settlement_timeout_seconds: -1 }],
    ['a token life that is a string', { ...SITE, access_token_ttl_seconds: '1800' }],
    ['a fractional token life', { ...SITE, access_token_ttl_seconds: 0.5 }],
    ['rules that are not a list', { ...SITE, rules: {} }],
    ['a rule whose price is a number', { ...SITE, rules: [{ path: '/a', price_usd: 0 }] }],
    ['a pay_to that is a number', { ...SITE, pay_to: 1 }],
    ['batch-settlement terms missing the escrow', { ...SITE, batch_settlement: { receiver_authorizer: '0xr' } }],
    ['a bot policy that is a string', { ...SITE, bot_policy: 'allow all' }],
    ['usable secrets that are not a list', { ...SITE, usable_secrets: 'fp1' }],
    [
      'a usable secret whose fingerprint is not a string',
      { ...SITE, usable_secrets: [{ fingerprint: 2, retires_at: null }] },
    ],
    ['a usable secret with no retirement field', { ...SITE, usable_secrets: [{ fingerprint: 'fp1' }] }],
    ['a retirement that is not a date', { ...SITE, usable_secrets: [{ fingerprint: 'fp1', retires_at: 'soon' }] }],
    [
      'more usable secrets than an API lists',
      { ...SITE, usable_secrets: Array.from({ length: 17 }, (_, i) => ({ fingerprint: `fp${i}`, retires_at: null })) },
    ],
  ])('refuses %s', (_name, body) => {
    expect(siteOfferOf(body)).toBeUndefined();
  });
});

/*
 * Below, an attacker's review of how the middleware reads the Crawlgate API's answers: a field of the
 * wrong type or form, prototype keys, huge numbers, a payment of another gate, a 200 with an error
 * body, a 5xx or a timeout must never read as a payment (api-answers.ts) nor come back from the
 * client as `paid` (api-client.ts). The gate then also requires a token that opens the path.
 */

/** JSON text with one field's value replaced by raw JSON, so spellings JSON.stringify cannot make survive. */
const withRaw = (body: object, key: string, raw: string) =>
  JSON.parse(JSON.stringify({ ...body, [key]: '__RAW__' }).replace('"__RAW__"', raw)) as unknown;

describe('paidGateOf: a hostile 200 is never a payment', () => {
  it.each([
    ['a status of another case', { ...PAID, status: 'PAID' }],
    ['the gate id with a trailing space', { ...PAID, gate_id: `${GATE} ` }],
    ['the gate id as a list', { ...PAID, gate_id: [GATE] }],
    ['a token that is a number', { ...PAID, access_token: 1 }],
    ['a token that is an object', { ...PAID, access_token: { toString: 'a.b' } }],
    ['a negative amount', { ...PAID, amount: '-10000' }],
    ['an amount as a JSON number', { ...PAID, amount: 10000 }],
    ['an amount in exponent form', { ...PAID, amount: '1e4' }],
    ['an amount of 79 digits', { ...PAID, amount: '9'.repeat(79) }],
    ['an amount with a trailing newline', { ...PAID, amount: '10000\n' }],
    ['a price with CR/LF (header injection)', { ...PAID, price_usd: '0.01\r\nset-cookie: x=1' }],
    ['a negative price', { ...PAID, price_usd: '-0.01' }],
    ['a price above 1 USD', { ...PAID, price_usd: '1000' }],
    ['a price as a JSON number', { ...PAID, price_usd: 0.01 }],
    ['a voucher that is a list', { ...PAID, batch_settlement: [] }],
    ['a voucher that is null', { ...PAID, batch_settlement: null }],
  ])('refuses %s', (_name, body) => {
    expect(paidGateOf(body, GATE)).toBeUndefined();
  });

  it('refuses a payment hidden under __proto__ or constructor, and passes no prototype key on', () => {
    const hidden = JSON.parse(`{"__proto__":${JSON.stringify(PAID)},"constructor":${JSON.stringify(PAID)}}`);
    expect(paidGateOf(hidden, GATE)).toBeUndefined();
    const { access_token: _token, ...withoutToken } = PAID;
    const inherited = JSON.parse(`{"__proto__":{"access_token":"a.b"},${JSON.stringify(withoutToken).slice(1)}`);
    expect(paidGateOf(inherited, GATE)).toBeUndefined();

    const polluted = JSON.parse(`{"__proto__":{"isAdmin":true},${JSON.stringify(PAID).slice(1)}`);
    const read = paidGateOf(polluted, GATE)!;
    expect(read).toEqual(PAID);
    expect(Object.getPrototypeOf(read)).toBe(Object.prototype);
    expect(Object.hasOwn(read, '__proto__')).toBe(false);
    expect((read as unknown as { isAdmin?: unknown }).isAdmin).toBeUndefined();
  });

  it('refuses a confirmed payment of another gate (another path), whatever else it says', () => {
    expect(paidGateOf({ ...PAID, gate_id: 'gate-of-/post/2', url: '/post/1' }, GATE)).toBeUndefined();
  });
});

describe('siteOfferOf and rejectionOf: huge, fractional or hidden values are refused', () => {
  it.each([
    ['an infinite pricing version (1e400)', withRaw(SITE, 'pricing_version', '1e400')],
    ['a settlement timeout beyond safe integers', { ...SITE, settlement_timeout_seconds: 2 ** 53 }],
    ['a gate lifetime as a string', { ...SITE, gate_ttl_seconds: '900' }],
    ['a pricing version as a string', { ...SITE, pricing_version: '3' }],
    ['rules holding a non-object', { ...SITE, rules: ['/free/*'] }],
    ['batch-settlement terms as a list', { ...SITE, batch_settlement: [] }],
    ['a bot policy as a list', { ...SITE, bot_policy: [] }],
    ['the whole offer under __proto__', JSON.parse(`{"__proto__":${JSON.stringify(SITE)}}`)],
  ])('refuses %s', (_name, body) => {
    expect(siteOfferOf(body)).toBeUndefined();
  });

  it('reads a corrective 402 only whole: no inherited channel state, no fractional withdrawal time', () => {
    const channel = {
      channelId: `0x${'c'.repeat(64)}`,
      balance: '1000000',
      totalClaimed: '0',
      withdrawRequestedAt: 0.5,
      refundNonce: '0',
      chargedCumulativeAmount: '20000',
    };
    expect(rejectionOf({ detail: 'd', reason: 'r', channel_state: channel })).toBeUndefined();
    const inherited = JSON.parse(`{"detail":"d","reason":"r","__proto__":{"channel_state":{"x":1}}}`);
    expect(rejectionOf(inherited)).toEqual({ detail: 'd', reason: 'r' });
    expect(
      siwxAccessOf(JSON.parse('{"__proto__":{"access_token":"a.b","expires_at":"e","url":"/","payer":"p"}}')),
    ).toBe(undefined);
  });
});

describe('createApiClient.verify: only a whole 200 for the gate asked about is `paid`', () => {
  const client = (answer: () => Promise<Response>) =>
    createApiClient({ apiUrl: 'https://api.test', siteToken: 'st', timeoutMs: 1000, fetch: answer as typeof fetch });
  const verify = (answer: () => Promise<Response>) => client(answer).verify(GATE, { x: 1 }, 1000);
  const json = (status: number, body: unknown) => async () =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

  it.each([
    ['a 200 with an error body', json(200, { detail: 'internal error' }), undefined],
    ['a 200 paying another gate', json(200, { ...PAID, gate_id: 'gate-of-/post/2' }), undefined],
    ['a 200 that is not JSON', async () => new Response('<html>ok</html>', { status: 200 }), undefined],
    ['a 200 with an empty body', async () => new Response('', { status: 200 }), undefined],
    ['a 201 with a whole payment', json(201, PAID), undefined],
    ['a 204', async () => new Response(null, { status: 204 }), undefined],
    ['a 500 with a whole payment', json(500, PAID), 500],
    ['a 502 with no body', async () => new Response('', { status: 502 }), 502],
    ['a 402 with a malformed correction', json(402, { detail: 'd', reason: 'r', channel_state: 'x' }), 402],
    [
      'a timeout',
      async () => {
        throw Object.assign(new Error('timed out'), { name: 'TimeoutError' });
      },
      undefined,
    ],
  ])('answers %s with a CrawlgateApiError, never a payment', async (_name, answer, status) => {
    const error = await verify(answer).then(
      (value) => value,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(CrawlgateApiError);
    expect((error as CrawlgateApiError).status).toBe(status);
  });

  it('reads a 404 carrying a whole payment as no answer (not the API’s error), never paid', async () => {
    await expect(verify(json(404, PAID))).rejects.toMatchObject({ status: undefined });
  });

  it('reads a whole payment of the gate asked about as paid, its extra fields dropped', async () => {
    await expect(verify(json(200, { ...PAID, injected: '\r\nx: y' }))).resolves.toEqual({ kind: 'paid', paid: PAID });
  });
});

describe('siteOfferOf: a domain fit for the headers it reaches', () => {
  /*
   * FINDING (failing on purpose; not fixed here; availability, not money). siteOfferOf checks the
   * domain's type only (api-answers.ts:86), and the middleware puts it into the Link header of every
   * 402 (license.ts:94/139, licensing on by default, crawlgate.ts:260). A GET /v1/site answer whose
   * domain holds CR/LF is taken as the site's terms; Node's writeHead then throws ERR_INVALID_CHAR
   * inside the Express adapter's .then (express.ts:39), outside the rejection handler: an unhandled
   * rejection on every 402 (a crash under Node's default), never a served page.
   */
  it('refuses a domain with CR/LF or other characters no host has', () => {
    expect(siteOfferOf({ ...SITE, domain: 'example.com\r\nset-cookie: a=1' })).toBeUndefined();
    expect(siteOfferOf({ ...SITE, domain: 'example.com/evil>; rel="x"' })).toBeUndefined();
  });
});

describe('refundedOf: a refund answer only when whole and for the gate asked about', () => {
  const REFUNDED: RefundedChannel = {
    status: 'refunded',
    gate_id: GATE,
    channel_id: CHANNEL.channelId,
    payer: '0xpayer',
    refund_amount: '30000',
    refund_tx_hash: `0x${'a'.repeat(64)}`,
    network: 'base',
    channel_state: CHANNEL,
  };

  it('reads a whole refund, dropping fields core does not name', () => {
    expect(refundedOf({ ...REFUNDED, injected: 'x' }, GATE)).toEqual(REFUNDED);
    expect(refundedOf({ ...REFUNDED, channel_state: { ...CHANNEL, extra: 1 } }, GATE)).toEqual(REFUNDED);
  });

  it.each([
    ['another gate', { ...REFUNDED, gate_id: 'other' }],
    ['a paid status', { ...REFUNDED, status: 'paid' }],
    ['an amount that is not atomic', { ...REFUNDED, refund_amount: '1.5' }],
    ['an amount that is a number', { ...REFUNDED, refund_amount: 30000 }],
    ['a transaction that is not a hash', { ...REFUNDED, refund_tx_hash: '0xabc' }],
    ['a channel id that is not 32 bytes', { ...REFUNDED, channel_id: '0x1234' }],
    ['no channel state', { ...REFUNDED, channel_state: undefined }],
    ['a channel state with a negative balance', { ...REFUNDED, channel_state: { ...CHANNEL, balance: '-1' } }],
  ])('refuses %s', (_name, body) => {
    expect(refundedOf(body, GATE)).toBeUndefined();
  });
});
