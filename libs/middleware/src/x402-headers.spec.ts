import { encodeBase64Json, MAX_PAYMENT_HEADER_LENGTH } from '@crawlgate/core';
import { FAKE_EXACT_PAYLOAD } from '../testing/fake-api';
import { presentedPayment } from './x402-headers';

const payment = (extra: Record<string, unknown> = {}) =>
  encodeBase64Json({ x402Version: 1, scheme: 'exact', network: 'local', payload: FAKE_EXACT_PAYLOAD, ...extra });

describe('presentedPayment', () => {
  it('reads a payment header of either name, v2 first', () => {
    expect(presentedPayment({ 'x-payment': payment() })).toMatchObject({ ok: true, via: 'x-payment' });
    expect(presentedPayment({ 'x-payment': 'junk', 'payment-signature': payment() })).toMatchObject({
      ok: true,
      via: 'payment-signature',
    });
    expect(presentedPayment({})).toBeUndefined();
  });

  it('refuses a header longer than MAX_PAYMENT_HEADER_LENGTH before decoding it (runtimes without a header limit)', () => {
    const padded = payment({ pad: 'a'.repeat(MAX_PAYMENT_HEADER_LENGTH) });
    expect(presentedPayment({ 'x-payment': padded })).toEqual({
      ok: false,
      via: 'x-payment',
      msg: expect.stringMatching(/longer than/),
    });
    // Just under: read as usual.
    const fitting = payment({ pad: 'a'.repeat(MAX_PAYMENT_HEADER_LENGTH / 2) });
    expect(fitting.length).toBeLessThanOrEqual(MAX_PAYMENT_HEADER_LENGTH);
    expect(presentedPayment({ 'x-payment': fitting })).toMatchObject({ ok: true });
  });
});
