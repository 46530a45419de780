import { encodeBase64Json } from '@crawlgate/core';
import { awaitsResend, resendWhileUnconfirmed, voucherAnswerOf } from './voucher-answers';

const settled = (success: boolean) => encodeBase64Json({ success, transaction: '', network: 'eip155:8453', payer: '' });
const answer = (status: number, headers: Record<string, string> = {}) =>
  new Response(status === 204 ? null : 'body', { status, headers });

describe('voucherAnswerOf', () => {
  it('counts a voucher as charged only on a settlement header saying so (PAYMENT-RESPONSE or X-PAYMENT-RESPONSE)', () => {
    expect(voucherAnswerOf(answer(200, { 'payment-response': settled(true) })).kind).toBe('charged');
    expect(voucherAnswerOf(answer(200, { 'x-payment-response': settled(true) })).kind).toBe('charged');
    // The gate took it, then the site behind failed, or its route answered 402 itself: still charged.
    expect(voucherAnswerOf(answer(500, { 'payment-response': settled(true) })).kind).toBe('charged');
    expect(voucherAnswerOf(answer(402, { 'payment-response': settled(true) })).kind).toBe('charged');
  });

  it('a 402 without the gate saying it took the voucher, or a failed settlement, is a refusal', () => {
    expect(voucherAnswerOf(answer(402)).kind).toBe('refused');
    expect(voucherAnswerOf(answer(402, { 'payment-response': 'not base64 json' })).kind).toBe('refused');
    expect(voucherAnswerOf(answer(500, { 'payment-response': settled(false) })).kind).toBe('refused');
  });

  it.each([200, 204, 404, 429, 502, 503, 504])(
    '%i without a settlement header says nothing of the voucher',
    (status) => {
      expect(voucherAnswerOf(answer(status)).kind).toBe('unconfirmed');
      expect(voucherAnswerOf(answer(status, { 'payment-response': 'not base64 json' })).kind).toBe('unconfirmed');
    },
  );
});

describe('awaitsResend', () => {
  it('is a 429 or 5xx that says nothing of the voucher', () => {
    for (const status of [429, 500, 502, 503, 504]) expect(awaitsResend(answer(status))).toBe(true);
    for (const status of [200, 404, 402]) expect(awaitsResend(answer(status))).toBe(false);
    expect(awaitsResend(answer(502, { 'payment-response': settled(true) }))).toBe(false);
  });
});

describe('resendWhileUnconfirmed', () => {
  /** A send() giving `answers` in turn (the last one again after them), and the waits asked for. */
  function scripted(...answers: Response[]) {
    const waits: number[] = [];
    let sends = 0;
    const send = async () => answers[Math.min(sends++, answers.length - 1)];
    return { send, wait: async (ms: number) => waits.push(ms), waits, sends: () => sends };
  }

  it('resends after a proxy’s 429 or 502 until the gate answers, waiting its Retry-After (at most 10 s)', async () => {
    const paid = answer(200, { 'payment-response': settled(true) });
    const run = scripted(answer(429, { 'retry-after': '3' }), answer(502), answer(503, { 'retry-after': '120' }), paid);
    expect(await resendWhileUnconfirmed(run.send, 6, run.wait)).toBe(paid);
    expect(run.sends()).toBe(4);
    expect(run.waits).toEqual([3000, 1000, 10_000]);
  });

  it('stops after maxResends, and never resends an answer about the voucher or one that is no failure', async () => {
    const failing = scripted(answer(502));
    expect((await resendWhileUnconfirmed(failing.send, 3, failing.wait)).status).toBe(502);
    expect(failing.sends()).toBe(4);
    for (const final of [answer(402), answer(200), answer(404), answer(500, { 'payment-response': settled(false) })]) {
      const run = scripted(final);
      expect(await resendWhileUnconfirmed(run.send, 6, run.wait)).toBe(final);
      expect(run.sends()).toBe(1);
    }
  });

  it('a Retry-After of 0 resends at once, a date waits until it, and one neither seconds nor a date waits the default second', async () => {
    const inFive = new Date(Date.now() + 5_000).toUTCString();
    const run = scripted(
      answer(429, { 'retry-after': '0' }),
      answer(503, { 'retry-after': inFive }),
      answer(429, { 'retry-after': '-5' }),
      answer(429, { 'retry-after': 'soon' }),
      answer(502, { 'retry-after': '1.5' }),
      answer(200),
    );
    await resendWhileUnconfirmed(run.send, 6, run.wait);
    expect(run.waits[0]).toBe(0);
    expect(run.waits[1]).toBeGreaterThanOrEqual(4000);
    expect(run.waits[1]).toBeLessThanOrEqual(6000);
    expect(run.waits.slice(2)).toEqual([1000, 1000, 1000]);
  });
});
