import { formatMicrosUsd } from '@crawlgate/core';
import type { PaymentEvent } from '@crawlgate/agent';
import { AsyncLocalStorage } from 'node:async_hooks';

/** What one page has cost this session. */
export interface PageSpend {
  url: string;
  spent_usd: string;
  payments: number;
  last_paid_at: string;
  last_tx_hash: string | null;
}

interface PageEntry {
  micros: bigint;
  payments: number;
  lastPaidAt: Date;
  lastTxHash: string | null;
}

/**
 * Every payment the agent made, by page, and which tool call made each. The agent reports
 * payments through one `onPayment` callback for all calls; the call that paid is the one whose
 * async context the callback runs in (the agent pays inside the fetch that met the 402), so two
 * tool calls running at once each see only their own payment, and a call that waited on another's
 * payment for the same page sees none.
 */
export class PaymentLedger {
  private readonly byPage = new Map<string, PageEntry>();
  private readonly currentCall = new AsyncLocalStorage<PaymentEvent[]>();

  constructor(private readonly now: () => Date = () => new Date()) {}

  /** The agent's onPayment. */
  record(event: PaymentEvent): void {
    const before = this.byPage.get(event.url);
    // Re-inserted, so the map stays ordered from the least to the most recently paid page.
    this.byPage.delete(event.url);
    this.byPage.set(event.url, {
      micros: (before?.micros ?? 0n) + BigInt(event.amount),
      payments: (before?.payments ?? 0) + 1,
      lastPaidAt: this.now(),
      lastTxHash: event.txHash,
    });
    this.currentCall.getStore()?.push(event);
  }

  /** Runs `work` and returns what it paid. */
  async during<T>(work: () => Promise<T>): Promise<{ value: T; payments: PaymentEvent[] }> {
    const payments: PaymentEvent[] = [];
    const value = await this.currentCall.run(payments, work);
    return { value, payments };
  }

  /** The `limit` most recently paid pages, newest first, and how many pages were paid in all. */
  pages(limit: number): { pages: PageSpend[]; total: number } {
    const newest = [...this.byPage].reverse().slice(0, limit);
    return {
      pages: newest.map(([url, entry]) => ({
        url,
        spent_usd: formatMicrosUsd(entry.micros),
        payments: entry.payments,
        last_paid_at: entry.lastPaidAt.toISOString(),
        last_tx_hash: entry.lastTxHash,
      })),
      total: this.byPage.size,
    };
  }
}
