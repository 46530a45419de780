import { paymentFingerprint, sameFingerprint } from './payment-fingerprint';

describe('paymentFingerprint', () => {
  const payment = {
    x402Version: 2,
    payload: { signature: '0xab', authorization: { from: '0x1', nonce: '0x2' } },
    extensions: { a: [1, { b: 2, a: 1 }] },
  };

  it('is the same for the same payment with its keys in another order', () => {
    const reordered = {
      extensions: { a: [1, { a: 1, b: 2 }] },
      payload: { authorization: { nonce: '0x2', from: '0x1' }, signature: '0xab' },
      x402Version: 2,
    };
    expect(paymentFingerprint('gate', reordered)).toBe(paymentFingerprint('gate', payment));
  });

  it('differs for another gate, another value anywhere, or array order', () => {
    const base = paymentFingerprint('gate', payment);
    expect(paymentFingerprint('other', payment)).not.toBe(base);
    expect(paymentFingerprint('gate', { ...payment, payload: { ...payment.payload, signature: '0xac' } })).not.toBe(
      base,
    );
    expect(paymentFingerprint('gate', { ...payment, extensions: { a: [{ b: 2, a: 1 }, 1] } })).not.toBe(base);
    // A string "2" is not the number 2.
    expect(paymentFingerprint('gate', { ...payment, x402Version: '2' })).not.toBe(base);
  });

  it('compares stored and presented fingerprints exactly', () => {
    const a = paymentFingerprint('gate', payment);
    expect(sameFingerprint(a, a)).toBe(true);
    expect(sameFingerprint(a, paymentFingerprint('other', payment))).toBe(false);
    expect(sameFingerprint(null, a)).toBe(false);
    expect(sameFingerprint(a.slice(1), a)).toBe(false);
  });
});
