import { BATCH_REASONS, parseBatchSettlementPayment } from './batch-settlement';

const CONFIG = {
  payer: '0x' + '3'.repeat(40),
  payerAuthorizer: '0x' + '3'.repeat(40),
  receiver: '0x' + '2'.repeat(40),
  receiverAuthorizer: '0x' + '4'.repeat(40),
  token: '0x' + '1'.repeat(40),
  withdrawDelay: 86400,
  salt: '0x' + '0'.repeat(64),
};
const VOUCHER = { channelId: '0x' + 'c'.repeat(64), maxClaimableAmount: '20000', signature: '0x' + 'ab'.repeat(65) };
const ACCEPTED = {
  scheme: 'batch-settlement',
  network: 'eip155:31337',
  amount: '10000',
  asset: CONFIG.token,
  payTo: CONFIG.receiver,
  maxTimeoutSeconds: 300,
};
const payment = (payload: Record<string, unknown>) => ({ x402Version: 2, accepted: ACCEPTED, payload });

describe('parseBatchSettlementPayment: refund requests', () => {
  it('takes x402’s refund payload, with or without an amount', () => {
    const whole = parseBatchSettlementPayment(payment({ type: 'refund', channelConfig: CONFIG, voucher: VOUCHER }));
    expect(whole).toMatchObject({ ok: true, payment: { type: 'refund', voucher: { maxClaimableAmount: 20000n } } });
    expect(whole.ok && whole.payment.refundAmount).toBeUndefined();
    const part = parseBatchSettlementPayment(
      payment({ type: 'refund', channelConfig: CONFIG, voucher: VOUCHER, amount: '5000' }),
    );
    expect(part.ok && part.payment.refundAmount).toBe(5000n);
  });

  it.each([['0'], ['-1'], ['1.5'], [5000], [''], [(1n << 128n).toString()]])(
    'refuses the amount %p as x402’s refund_amount_invalid',
    (amount) => {
      const parsed = parseBatchSettlementPayment(
        payment({ type: 'refund', channelConfig: CONFIG, voucher: VOUCHER, amount }),
      );
      expect(parsed).toMatchObject({ ok: false, reason: BATCH_REASONS.refundAmountInvalid });
    },
  );

  it('refuses a refund without its voucher, and a payload type it does not know', () => {
    expect(parseBatchSettlementPayment(payment({ type: 'refund', channelConfig: CONFIG }))).toMatchObject({
      ok: false,
      reason: BATCH_REASONS.voucherPayload,
    });
    expect(
      parseBatchSettlementPayment(payment({ type: 'close', channelConfig: CONFIG, voucher: VOUCHER })),
    ).toMatchObject({ ok: false, reason: BATCH_REASONS.payloadType });
  });

  it('keeps an amount only on refunds: a voucher carrying one is a voucher', () => {
    const parsed = parseBatchSettlementPayment(
      payment({ type: 'voucher', channelConfig: CONFIG, voucher: VOUCHER, amount: '5000' }),
    );
    expect(parsed.ok && parsed.payment.refundAmount).toBeUndefined();
  });
});
