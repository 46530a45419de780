import { formatMicrosUsd } from '@crawlgate/core';

/**
 * Spending in micro-USD. A payment reserves its amount before anything is signed, so concurrent
 * fetches can never together exceed the budget; the reservation is kept when the payment
 * succeeds and released when it fails.
 */
export class Budget {
  private spentMicros = 0n;
  private reservedMicros = 0n;
  private count = 0;

  constructor(private readonly limitMicros: bigint) {}

  remaining(): bigint {
    return this.limitMicros - this.spentMicros - this.reservedMicros;
  }

  /** Reserves `micros` if it fits; false otherwise. */
  reserve(micros: bigint): boolean {
    if (micros > this.remaining()) return false;
    this.reservedMicros += micros;
    return true;
  }

  commit(micros: bigint): void {
    this.reservedMicros -= micros;
    this.spentMicros += micros;
    this.count += 1;
  }

  release(micros: bigint): void {
    this.reservedMicros -= micros;
  }

  summary(): { usd: string; micros: bigint; payments: number; remainingUsd: string } {
    return { usd: formatMicrosUsd(this.spentMicros), micros: this.spentMicros, payments: this.count, remainingUsd: formatMicrosUsd(this.remaining()) };
  }
}
