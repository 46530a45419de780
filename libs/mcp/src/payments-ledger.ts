import { formatMicrosUsd } from '@crawlgate/core';
import type { PaymentEvent, UnconfirmedPaymentEvent } from '@crawlgate/agent';
import { AsyncLocalStorage } from 'node:async_hooks';

/** What one page has cost this session. */
export interface PageSpend {
  url: string;
  /** Confirmed payments. */
  spent_usd: string;
  payments: number;
  /** Payments that left with no answer saying whether they were taken: the budget counts them as spent. */
  unconfirmed_usd: string;
  /** Signed authorizations the site refused but holds: reserved from the budget until they expire (or are settled). */
  held_usd: string;
  /** When a payment for the page last left, confirmed or not. */
  last_paid_at: string;
  last_tx_hash: string | null;
}

interface PageEntry {
  micros: bigint;
  payments: number;
  unconfirmedMicros: bigint;
  heldMicros: bigint;
  lastPaidAt: Date;
  lastTxHash: string | null;
}

/**
 * A fetch that failed after its payment left the agent: `cause` is why it failed, `payment` the
 * payment whose fate is unknown, or which the site holds.
 */
export class PaymentUnconfirmedError extends Error {
  override readonly name = 'PaymentUnconfirmedError';
  constructor(
    override readonly cause: unknown,
    readonly payment: UnconfirmedPaymentEvent,
  ) {
    super(`the payment for ${payment.url} left, unconfirmed`);
  }
}

/** A call that failed after a payment it made was confirmed: the page was paid, and is read on its token when fetched again. */
export class PaidPageUnreadError extends Error {
  override readonly name = 'PaidPageUnreadError';
  constructor(
    override readonly cause: unknown,
    readonly payment: PaymentEvent,
  ) {
    super(`the payment for ${payment.url} was made, but the page could not be read`);
  }
}

interface CallPayments {
  payments: PaymentEvent[];
  unconfirmed: UnconfirmedPaymentEvent[];
}

/**
 * Every payment the agent made, by page, and which tool call made each: confirmed ones
 * (`onPayment`) and those that left unconfirmed (`onUnconfirmedPayment`). The agent reports them
 * through one callback each for all calls; the call that paid is the one whose async context the
 * callback runs in (the agent pays inside the fetch that met the 402), so two tool calls running
 * at once each see only their own payment, and a call that waited on another's payment for the
 * same page sees none.
 */
export class PaymentLedger {
  private readonly byPage = new Map<string, PageEntry>();
  private readonly currentCall = new AsyncLocalStorage<CallPayments>();
  /** The calls under way (during()): a stop waits for them (idle). */
  private readonly running = new Set<Promise<unknown>>();

  constructor(private readonly now: () => Date = () => new Date()) {}

  /** The agent's onPayment. */
  record(event: PaymentEvent): void {
    const micros = BigInt(event.amount);
    // A payment reported unconfirmed before, confirmed now: moved to spent, not counted twice.
    if (event.confirms) this.takeBack(event.confirms.url, event.confirms.status, micros);
    this.add(event.url, { micros, payments: 1, lastTxHash: event.txHash });
    this.currentCall.getStore()?.payments.push(event);
  }

  /** The agent's onUnconfirmedPayment. */
  recordUnconfirmed(event: UnconfirmedPaymentEvent): void {
    const micros = BigInt(event.amount);
    this.add(event.url, event.status === 'held' ? { heldMicros: micros } : { unconfirmedMicros: micros });
    this.currentCall.getStore()?.unconfirmed.push(event);
  }

  /**
   * Runs `work` and returns what it paid. When it fails after a payment left unconfirmed, it
   * fails with a PaymentUnconfirmedError saying so; after one confirmed, a PaidPageUnreadError.
   */
  async during<T>(
    work: () => Promise<T>,
  ): Promise<{ value: T; payments: PaymentEvent[]; unconfirmed: UnconfirmedPaymentEvent[] }> {
    const call: CallPayments = { payments: [], unconfirmed: [] };
    const run = this.currentCall.run(call, work);
    this.running.add(run);
    void run.then(
      () => this.running.delete(run),
      () => this.running.delete(run),
    );
    try {
      const value = await run;
      // A page may come back after a payment left unconfirmed (the site's 5xx, its API silent): said too.
      return { value, payments: call.payments, unconfirmed: call.unconfirmed };
    } catch (error) {
      const left = call.unconfirmed.at(-1);
      if (left) throw new PaymentUnconfirmedError(error, left);
      const paid = call.payments.at(-1);
      throw paid ? new PaidPageUnreadError(error, paid) : error;
    }
  }

  /** Settles once no call is under way, however each ends: calls started meanwhile included. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  /** The `limit` most recently paid pages, newest first, and how many pages were paid in all. */
  pages(limit: number): { pages: PageSpend[]; total: number } {
    const newest = [...this.byPage].reverse().slice(0, limit);
    return {
      pages: newest.map(([url, entry]) => ({
        url,
        spent_usd: formatMicrosUsd(entry.micros),
        payments: entry.payments,
        unconfirmed_usd: formatMicrosUsd(entry.unconfirmedMicros),
        held_usd: formatMicrosUsd(entry.heldMicros),
        last_paid_at: entry.lastPaidAt.toISOString(),
        last_tx_hash: entry.lastTxHash,
      })),
      total: this.byPage.size,
    };
  }

  /** Takes `micros` off a page's unconfirmed or held sum, never below zero; its place in the order stays. */
  private takeBack(url: string, status: UnconfirmedPaymentEvent['status'], micros: bigint): void {
    const entry = this.byPage.get(url);
    if (!entry) return;
    const less = (sum: bigint) => (sum > micros ? sum - micros : 0n);
    if (status === 'held') entry.heldMicros = less(entry.heldMicros);
    else entry.unconfirmedMicros = less(entry.unconfirmedMicros);
  }

  private add(url: string, more: Partial<Omit<PageEntry, 'lastPaidAt'>>): void {
    const before = this.byPage.get(url);
    // Re-inserted, so the map stays ordered from the least to the most recently paid page.
    this.byPage.delete(url);
    this.byPage.set(url, {
      micros: (before?.micros ?? 0n) + (more.micros ?? 0n),
      payments: (before?.payments ?? 0) + (more.payments ?? 0),
      unconfirmedMicros: (before?.unconfirmedMicros ?? 0n) + (more.unconfirmedMicros ?? 0n),
      heldMicros: (before?.heldMicros ?? 0n) + (more.heldMicros ?? 0n),
      lastPaidAt: this.now(),
      lastTxHash: more.lastTxHash !== undefined ? more.lastTxHash : (before?.lastTxHash ?? null),
    });
  }
}
