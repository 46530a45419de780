import type { ChannelStateView, PaidGate, SiteOffer, SiwxAccess } from '@crawlgate/core';
import { errorDetailOf, paidGateOf, pendingOf, rejectionOf, siteOfferOf, siwxAccessOf } from './api-answers';

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
  });

  it.each([
    ['null', null],
    ['no domain', { ...SITE, domain: undefined }],
    ['a chain id that is a string', { ...SITE, chain_id: '8453' }],
    ['a fractional gate lifetime', { ...SITE, gate_ttl_seconds: 1.5 }],
    ['a negative settlement timeout', { ...SITE, settlement_timeout_seconds: -1 }],
    ['rules that are not a list', { ...SITE, rules: {} }],
    ['a rule whose price is a number', { ...SITE, rules: [{ path: '/a', price_usd: 0 }] }],
    ['a pay_to that is a number', { ...SITE, pay_to: 1 }],
    ['batch-settlement terms missing the escrow', { ...SITE, batch_settlement: { receiver_authorizer: '0xr' } }],
    ['a bot policy that is a string', { ...SITE, bot_policy: 'allow all' }],
  ])('refuses %s', (_name, body) => {
    expect(siteOfferOf(body)).toBeUndefined();
  });
});
