import {
  encodeBase64Json,
  type AgentPayment,
  type AgentPaymentPage,
  type AgentProfile,
  type PaidGate,
  type PaymentRejection,
  type SettleResponse,
} from '@crawlgate/core';
import {
  errorDetailOf,
  isAgentPaymentPage,
  isAgentProfile,
  MAX_SITE_TEXT,
  refusalOf,
  settlementIn,
  settlementOf,
  verifyAnswerOf,
} from './answers';

const PROFILE: AgentProfile = {
  address: '0x' + 'Ab'.repeat(20),
  payments_count: 2,
  total_spent_usd: '0.011',
  total_spent_amount: '11000',
  first_payment_at: '2026-11-23T10:00:00.000Z',
  last_payment_at: '2026-11-23T11:00:00.000Z',
  sites_count: 1,
};

const PAYMENT: AgentPayment = {
  payment_id: 'p',
  gate_id: 'g',
  site_id: 's',
  url: '/a',
  amount: '1000',
  price_usd: '0.001',
  tx_hash: null,
  scheme: 'batch-settlement',
  channel_id: '0x' + '1'.repeat(64),
  network: 'local',
  paid_at: '2026-11-23T10:00:00.000Z',
};

describe('settlementIn', () => {
  it('reads an answer’s X-PAYMENT-RESPONSE, else its PAYMENT-RESPONSE', () => {
    const header = (success: boolean) => encodeBase64Json({ success });
    const answer = (headers: Record<string, string>) => new Response(null, { headers });
    expect(settlementIn(answer({ 'payment-response': header(true) }))).toEqual({ success: true });
    expect(settlementIn(answer({ 'x-payment-response': header(false), 'payment-response': header(true) }))).toEqual({
      success: false,
    });
    expect(settlementIn(answer({}))).toBeUndefined();
  });
});

describe('settlementOf', () => {
  it('reads the fields the agent acts on from a settlement header', () => {
    const header: SettleResponse = {
      success: false,
      errorReason: 'insufficient_funds',
      transaction: '',
      network: 'base',
      payer: '0x',
    };
    expect(settlementOf(encodeBase64Json(header))).toEqual({
      success: false,
      errorReason: 'insufficient_funds',
      transaction: '',
    });
  });

  it("keeps a transaction only as a hash: a site's text never reaches onPayment's txHash (helper-353)", () => {
    const hash = `0x${'ab'.repeat(32)}`;
    expect(settlementOf(encodeBase64Json({ success: true, transaction: hash }))).toEqual({
      success: true,
      transaction: hash,
    });
    for (const transaction of ['\u001b[2Jpaid', `${hash}00`, 'x'.repeat(5_000)])
      expect(settlementOf(encodeBase64Json({ success: true, transaction }))).toEqual({ success: true });
  });

  it('drops fields of the wrong type, and is undefined for no header or no object', () => {
    expect(settlementOf(encodeBase64Json({ success: 'false', errorReason: 7, transaction: {} }))).toEqual({});
    for (const header of [null, '', 'not base64 json!', encodeBase64Json(null), encodeBase64Json([{ success: false }])])
      expect(settlementOf(header)).toBe(undefined);
  });
});

describe('refusalOf and verifyAnswerOf', () => {
  it('reads a rejection and a paid answer', () => {
    const rejection: PaymentRejection = {
      detail: 'too little',
      reason: 'invalid_exact_evm_payload_authorization_value',
    };
    expect(refusalOf(rejection)).toEqual(rejection);
    const paid: Partial<PaidGate> = { status: 'paid', access_token: 'tok' };
    expect(verifyAnswerOf(paid)).toEqual({ accessToken: 'tok' });
  });

  it('counts a field of the wrong type, an empty token or a body that is no object as absent', () => {
    expect(refusalOf({ reason: 402, detail: [{ loc: [], msg: 'x', type: 'y' }] })).toEqual({});
    expect(verifyAnswerOf({ access_token: '', reason: 'r' })).toEqual({ reason: 'r' });
    expect(verifyAnswerOf({ access_token: 1 })).toEqual({});
    for (const body of [undefined, null, 'access_token', [{ access_token: 't' }]]) {
      expect(refusalOf(body)).toEqual({});
      expect(verifyAnswerOf(body)).toEqual({});
    }
  });

  it("keeps at most MAX_SITE_TEXT characters of a site's reason, detail or errorReason", () => {
    const long = 'x'.repeat(400_000);
    const cut = `${'x'.repeat(MAX_SITE_TEXT - 1)}…`;
    expect(refusalOf({ reason: long, detail: long })).toEqual({ reason: cut, detail: cut });
    expect(verifyAnswerOf({ detail: long })).toEqual({ detail: cut });
    expect(errorDetailOf({ detail: long })).toBe(cut);
    expect(settlementOf(encodeBase64Json({ success: false, errorReason: long }))).toEqual({
      success: false,
      errorReason: cut,
    });
    expect(refusalOf({ reason: 'x'.repeat(MAX_SITE_TEXT) })).toEqual({ reason: 'x'.repeat(MAX_SITE_TEXT) });
  });

  it('shows an API error detail only when it is a sentence', () => {
    expect(errorDetailOf({ detail: 'Invalid X-Wallet-Address' })).toBe('Invalid X-Wallet-Address');
    expect(errorDetailOf({ detail: [{ loc: ['query', 'limit'], msg: 'x', type: 'y' }] })).toBe(undefined);
    expect(errorDetailOf(null)).toBe(undefined);
  });
});

describe('isAgentProfile and isAgentPaymentPage', () => {
  it('accept the API answers as core types them', () => {
    expect(isAgentProfile(PROFILE)).toBe(true);
    expect(isAgentProfile({ ...PROFILE, first_payment_at: null, last_payment_at: null })).toBe(true);
    const page: AgentPaymentPage = {
      items: [PAYMENT, { ...PAYMENT, tx_hash: '0x12', channel_id: null }],
      next_cursor: null,
    };
    expect(isAgentPaymentPage(page)).toBe(true);
    expect(isAgentPaymentPage({ items: [], next_cursor: 'c' })).toBe(true);
  });

  it('refuse an answer with a field missing or of another type, in the page or in an item', () => {
    const { sites_count: _sites, ...noSites } = PROFILE;
    expect(isAgentProfile(noSites)).toBe(false);
    expect(isAgentProfile({ ...PROFILE, payments_count: '2' })).toBe(false);
    expect(isAgentProfile(null)).toBe(false);
    expect(isAgentPaymentPage({ items: {}, next_cursor: null })).toBe(false);
    expect(isAgentPaymentPage({ items: [] })).toBe(false);
    expect(isAgentPaymentPage({ items: [{ ...PAYMENT, amount: 1000 }], next_cursor: null })).toBe(false);
    expect(isAgentPaymentPage({ items: [null], next_cursor: null })).toBe(false);
  });
});
