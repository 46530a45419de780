import {
  appendPaymentIdentifierToExtensions,
  declarePaymentIdentifierExtension,
  extractPaymentIdentifier,
  generatePaymentId,
} from '@x402/extensions/payment-identifier';
import { decodeBase64Json } from './base64url';
import { buildGateOffer, paymentRequiredHeader } from './gate-offer';
import { PAYMENT_IDENTIFIER, paymentIdentifierDeclaration, readPaymentIdentifier } from './payment-identifier';

describe('payment-identifier', () => {
  it('declares the extension exactly as x402’s own server helper does', () => {
    expect(paymentIdentifierDeclaration()).toEqual(declarePaymentIdentifierExtension(false));
  });

  it('reads the id x402’s client helper appends to a payment', () => {
    const extensions: Record<string, unknown> = { [PAYMENT_IDENTIFIER]: paymentIdentifierDeclaration() };
    const id = generatePaymentId();
    appendPaymentIdentifierToExtensions(extensions, id);
    const payment = { x402Version: 2, extensions };
    expect(readPaymentIdentifier(payment)).toEqual({ ok: true, id });
    expect(extractPaymentIdentifier(payment as never)).toBe(id);
  });

  it('reads no id from a payment without the extension or without an id', () => {
    expect(readPaymentIdentifier({ x402Version: 1 })).toEqual({ ok: true, id: null });
    expect(readPaymentIdentifier({ extensions: {} })).toEqual({ ok: true, id: null });
    expect(readPaymentIdentifier({ extensions: { [PAYMENT_IDENTIFIER]: { info: { required: false } } } })).toEqual({
      ok: true,
      id: null,
    });
  });

  it.each([
    ['too short', 'abc'],
    ['too long', 'a'.repeat(129)],
    ['odd characters', 'pay_abc!@#defghijklmnop'],
    ['not a string', 1234567890123456],
  ])('refuses an id %s', (_, id) => {
    expect(
      readPaymentIdentifier({ extensions: { [PAYMENT_IDENTIFIER]: { info: { required: false, id } } } }),
    ).toMatchObject({ ok: false });
  });

  it('refuses extensions that are not objects', () => {
    expect(readPaymentIdentifier({ extensions: [] })).toMatchObject({ ok: false });
    expect(readPaymentIdentifier({ extensions: { [PAYMENT_IDENTIFIER]: 'x' } })).toMatchObject({ ok: false });
  });

  it('is advertised in the PAYMENT-REQUIRED header of every gate', () => {
    const gate = {
      siteId: 's',
      ref: 'r',
      path: '/a',
      micros: 10_000n,
      chainId: 31337,
      asset: '0x' + '1'.repeat(40),
      payTo: '0x' + '2'.repeat(40),
      iat: 0,
      exp: 600,
    } as const;
    const terms = {
      network: 'local',
      x402Network: 'local',
      caip2: 'eip155:31337',
      assetName: 'USDC',
      assetVersion: '2',
    };
    const offer = buildGateOffer('id', gate as never, terms, {
      domain: 'example.com',
      apiBaseUrl: 'https://api',
      now: 0,
    });
    const required = decodeBase64Json(paymentRequiredHeader(offer, 'eip155:31337')) as {
      extensions: Record<string, unknown>;
    };
    expect(required.extensions[PAYMENT_IDENTIFIER]).toEqual(declarePaymentIdentifierExtension(false));
  });
});
