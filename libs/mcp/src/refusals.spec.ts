import {
  BudgetExceededError,
  InsecureConnectionError,
  PaymentFailedError,
  PaymentNotAllowedError,
  PriceTooHighError,
  UnsupportedPaymentError,
} from '@crawlgate/agent';
import { PrivateAddressError } from '@crawlgate/middleware/node';
import { PaymentUnconfirmedError } from './payments-ledger';
import { refusalOf, ToolError } from './refusals';

const URL_ = 'https://news.example/a';

describe('refusalOf', () => {
  it("keeps the agent's refusals' facts under stable codes", () => {
    expect(refusalOf(new PriceTooHighError(URL_, '0.01', '0.005'))).toEqual({
      code: 'price_too_high',
      message: expect.stringContaining('0.005'),
      url: URL_,
      price_usd: '0.01',
      max_price_usd: '0.005',
    });
    expect(refusalOf(new BudgetExceededError(URL_, '0.01', '0.002'))).toEqual({
      code: 'budget_exceeded',
      message: expect.any(String),
      url: URL_,
      price_usd: '0.01',
      remaining_usd: '0.002',
    });
    const refused = [{ network: 'base', asset: '0x1', amount: '1000', reason: 'network_not_allowed' as const }];
    expect(refusalOf(new PaymentNotAllowedError(URL_, refused))).toEqual({
      code: 'network_not_allowed',
      message: expect.any(String),
      url: URL_,
      refused,
    });
    expect(refusalOf(new InsecureConnectionError('http://news.example/a'))).toEqual({
      code: 'insecure_connection',
      message: expect.stringContaining('plain http'),
      url: 'http://news.example/a',
    });
    expect(refusalOf(new PaymentFailedError(URL_, 'insufficient_funds', 'no money'))).toEqual({
      code: 'payment_failed',
      message: expect.stringContaining('no money'),
      url: URL_,
      reason: 'insufficient_funds',
    });
    expect(refusalOf(new UnsupportedPaymentError('no exact offer'), URL_)).toEqual({
      code: 'unsupported_payment',
      message: 'no exact offer',
      url: URL_,
    });
  });

  it('says a payment left, unconfirmed, with its price and payee, never that nothing was paid', () => {
    const payment = {
      url: URL_,
      priceUsd: '0.001',
      amount: '1000',
      network: 'base',
      payTo: '0x2',
      payer: '0x1',
      mode: 'authorization' as const,
    };
    const held = new PaymentUnconfirmedError(new PaymentFailedError(URL_, 'invalid_payment', 'no'), {
      ...payment,
      status: 'held',
    });
    expect(refusalOf(held)).toEqual({
      code: 'payment_unconfirmed',
      message: expect.stringContaining('holds its signed authorization'),
      url: URL_,
      payment_status: 'held',
      reason: 'invalid_payment',
      price_usd: '0.001',
      amount: '1000',
      pay_to: '0x2',
      network: 'base',
    });
    const lost = new TypeError('fetch failed', { cause: { code: 'UND_ERR_SOCKET' } });
    expect(refusalOf(new PaymentUnconfirmedError(lost, { ...payment, status: 'unknown' }))).toMatchObject({
      code: 'payment_unconfirmed',
      message: expect.stringContaining('counts as spent (fetch failed: UND_ERR_SOCKET)'),
      payment_status: 'unknown',
      reason: 'fetch_failed',
    });
  });

  it('refuses a page on a private network with the host it is on, and says how the operator allows them', () => {
    expect(refusalOf(new PrivateAddressError('metadata.test', 'resolves to a loopback address'), URL_)).toEqual({
      code: 'private_network',
      message: expect.stringMatching(
        /^metadata\.test resolves to a loopback address: .*CRAWLGATE_ALLOW_PRIVATE_NETWORKS/,
      ),
      url: URL_,
      host: 'metadata.test',
    });
  });

  it('says why a request failed, from the cause fetch gives', () => {
    const failed = new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
    });
    expect(refusalOf(failed, URL_)).toEqual({ code: 'fetch_failed', message: 'fetch failed: ECONNREFUSED', url: URL_ });
    expect(refusalOf(new TypeError('redirected more than 10 times'), URL_)).toMatchObject({
      code: 'fetch_failed',
      message: 'redirected more than 10 times',
    });
    expect(refusalOf(new DOMException('The operation timed out.', 'TimeoutError'), URL_)).toMatchObject({
      code: 'timeout',
      url: URL_,
    });
  });

  it("passes its own errors' code and details through, and anything else as internal_error", () => {
    expect(refusalOf(new ToolError('no_price', 'no price', { status: 402 }), URL_)).toEqual({
      code: 'no_price',
      message: 'no price',
      url: URL_,
      status: 402,
    });
    expect(refusalOf(new Error('boom'))).toEqual({ code: 'internal_error', message: 'boom' });
    expect(refusalOf('thrown text')).toEqual({ code: 'internal_error', message: 'thrown text' });
  });
});
