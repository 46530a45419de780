import { formatMicrosUsd } from '@crawlgate/core';
import { createMemoryBudgetStore, type BudgetState, type BudgetStore, type Reservation } from './budget-store';

export interface BudgetSummary {
  usd: string;
  micros: bigint;
  payments: number;
  remainingUsd: string;
  /**
   * Reserved, neither spent nor free: payments under way, and signed authorizations sites refused
   * but still hold (they could settle them until they expire).
   */
  reservedUsd: string;
}

/**
 * Spending in micro-USD against a limit. A payment reserves its amount in the store before
 * anything is signed, so concurrent fetches (of this process or of others sharing the store) can
 * never together exceed the budget; the reservation is kept when the payment succeeds, released
 * when nothing was sent, and left reserved when the site refused an authorization it holds.
 */
export class Budget {
  constructor(
    private readonly limitMicros: bigint,
    private readonly store: BudgetStore = createMemoryBudgetStore(),
  ) {}

  /** A reservation of `micros` if it fits; null otherwise. */
  async reserve(micros: bigint): Promise<Reservation | null> {
    return (await this.store.reserve(micros, this.limitMicros))?.reservation ?? null;
  }

  async settle(reservation: Reservation, charged: boolean): Promise<void> {
    await this.store.settle(reservation, charged);
  }

  /** Money that came back (a withdrawn deposit): no longer spent, if the store can take it back. */
  async credit(micros: bigint): Promise<void> {
    await this.store.credit?.(micros);
  }

  /** What is left, as the store says now. */
  async remaining(): Promise<bigint> {
    return this.remainingOf(await this.store.read());
  }

  /** As this process last saw the store (other processes' spending since then not included). */
  summary(): BudgetSummary {
    return this.summaryOf(this.store.lastSeen());
  }

  /** Read from the store now. */
  async current(): Promise<BudgetSummary> {
    return this.summaryOf(await this.store.read());
  }

  private remainingOf(state: BudgetState): bigint {
    const left = this.limitMicros - state.spentMicros - state.reservedMicros;
    return left > 0n ? left : 0n;
  }

  private summaryOf(state: BudgetState): BudgetSummary {
    return {
      usd: formatMicrosUsd(state.spentMicros),
      micros: state.spentMicros,
      payments: state.payments,
      remainingUsd: formatMicrosUsd(this.remainingOf(state)),
      reservedUsd: formatMicrosUsd(state.reservedMicros),
    };
  }
}
