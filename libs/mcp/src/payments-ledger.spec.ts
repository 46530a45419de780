import type { PaymentEvent, UnconfirmedPaymentEvent } from '@crawlgate/agent';
import { PaymentLedger, PaymentUnconfirmedError } from './payments-ledger';

const event = (url: string, amount: string, txHash: string | null = null): PaymentEvent => ({
  url,
  amount,
  priceUsd: '',
  network: 'base',
  payer: '0x1',
  txHash,
  mode: 'authorization',
});
const unconfirmed = (url: string, status: UnconfirmedPaymentEvent['status']): UnconfirmedPaymentEvent => ({
  url,
  amount: '1000',
  priceUsd: '0.001',
  network: 'base',
  payTo: '0x2',
  payer: '0x1',
  mode: 'authorization',
  status,
});
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('PaymentLedger', () => {
  it('sums payments by page, newest first, within a limit', () => {
    let clock = 0;
    const ledger = new PaymentLedger(() => new Date(Date.UTC(2026, 0, 1, 0, 0, clock++)));
    ledger.record(event('https://a.example/1', '1000', '0xa'));
    ledger.record(event('https://a.example/2', '2500'));
    ledger.record(event('https://a.example/1', '1000', '0xb'));
    expect(ledger.pages(10)).toEqual({
      pages: [
        {
          url: 'https://a.example/1',
          spent_usd: '0.002',
          payments: 2,
          unconfirmed_usd: '0',
          held_usd: '0',
          last_paid_at: '2026-01-01T00:00:02.000Z',
          last_tx_hash: '0xb',
        },
        {
          url: 'https://a.example/2',
          spent_usd: '0.0025',
          payments: 1,
          unconfirmed_usd: '0',
          held_usd: '0',
          last_paid_at: '2026-01-01T00:00:01.000Z',
          last_tx_hash: null,
        },
      ],
      total: 2,
    });
    expect(ledger.pages(1)).toMatchObject({ pages: [{ url: 'https://a.example/1' }], total: 2 });
  });

  it('tells each of two concurrent calls what it paid, and nothing to a call that paid nothing', async () => {
    const ledger = new PaymentLedger();
    const paying = (url: string) => async () => {
      await tick();
      ledger.record(event(url, '1000'));
      await tick();
      return url;
    };
    const [one, two, none] = await Promise.all([
      ledger.during(paying('https://a.example/1')),
      ledger.during(paying('https://a.example/2')),
      ledger.during(async () => tick()),
    ]);
    expect(one.payments.map((payment) => payment.url)).toEqual(['https://a.example/1']);
    expect(two.payments.map((payment) => payment.url)).toEqual(['https://a.example/2']);
    expect(none.payments).toEqual([]);
    expect(one.value).toBe('https://a.example/1');
  });

  it('lists what left unconfirmed by page, and fails the call that sent it saying so', async () => {
    const ledger = new PaymentLedger(() => new Date(Date.UTC(2026, 0, 1)));
    ledger.record(event('https://a.example/1', '1000', '0xa'));
    const lost = new TypeError('fetch failed');
    const failing = ledger.during(async () => {
      ledger.recordUnconfirmed(unconfirmed('https://a.example/1', 'unknown'));
      throw lost;
    });
    await expect(failing).rejects.toEqual(expect.any(PaymentUnconfirmedError));
    await failing.catch((error: PaymentUnconfirmedError) => {
      expect(error.cause).toBe(lost);
      expect(error.payment.status).toBe('unknown');
    });
    ledger.recordUnconfirmed(unconfirmed('https://a.example/2', 'held'));
    ledger.recordUnconfirmed(unconfirmed('https://a.example/2', 'held'));
    expect(ledger.pages(10).pages).toEqual([
      expect.objectContaining({ url: 'https://a.example/2', spent_usd: '0', payments: 0, held_usd: '0.002' }),
      expect.objectContaining({
        url: 'https://a.example/1',
        spent_usd: '0.001',
        payments: 1,
        unconfirmed_usd: '0.001',
        held_usd: '0',
        last_tx_hash: '0xa',
      }),
    ]);
    // The unknown payment of page 1 confirmed later (read by another URL): spent once, no longer unconfirmed.
    ledger.record({
      ...event('https://a.example/1b', '1000'),
      confirms: { url: 'https://a.example/1', status: 'unknown' },
    });
    const pages = ledger.pages(10).pages;
    expect(pages.find((page) => page.url === 'https://a.example/1')).toMatchObject({
      spent_usd: '0.001',
      unconfirmed_usd: '0',
    });
    expect(pages[0]).toMatchObject({ url: 'https://a.example/1b', spent_usd: '0.001', unconfirmed_usd: '0' });
    // One of page 2's held ones settled, confirmed: the other is still held.
    ledger.record({
      ...event('https://a.example/2', '1000'),
      confirms: { url: 'https://a.example/2', status: 'held' },
    });
    expect(ledger.pages(1).pages[0]).toMatchObject({ spent_usd: '0.001', payments: 1, held_usd: '0.001' });
    // A failure with nothing sent is the failure itself.
    await expect(ledger.during(() => Promise.reject(lost))).rejects.toBe(lost);
  });
});
