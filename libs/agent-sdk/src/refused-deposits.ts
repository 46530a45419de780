import type { Reservation } from './budget-store';
import type { Channel, signDeposit } from './channels';

/*
 * Deposit authorizations a site refused and still holds: whoever holds one can make it until it
 * expires. One is kept per channel and resent as that channel's next deposit while it has
 * REUSE_MARGIN_SECONDS left, so a site that keeps refusing gets one deposit's worth of the budget
 * at a time, not one per page. Past that margin, or when it is not enough for the channel's next
 * deposit, it is released (held-authorizations.ts: reserved until the chain says whether anyone
 * made it), and the channel still counts as holding it until it expires. A site that makes each
 * released one itself moves budget into its channel a deposit at a time: counted, never over the
 * budget, and withdrawable by the agent after the channel's delay.
 */

/** A refused deposit is resent only while it has this long left. */
export const REUSE_MARGIN_SECONDS = 30;

/** A deposit authorization as sent, with its budget reservation. */
export interface SentDeposit {
  payload: Awaited<ReturnType<typeof signDeposit>>;
  amount: bigint;
  reservation: Reservation;
  validBefore: bigint;
}

export interface RefusedDeposits {
  /** Keeps `deposit` for `channel`'s next deposit, until it is no longer worth resending. */
  keep(channel: Channel, deposit: SentDeposit): void;
  /** The channel's kept deposit when it covers `needed` and is still worth resending; a kept one that is not is released. */
  take(channel: Channel, needed: bigint): SentDeposit | undefined;
  /** Whether the site holds a refused deposit of `channel` that someone could still make: kept, or released but not expired. */
  has(channel: Channel): boolean;
}

export function refusedDeposits(onRelease: (channel: Channel, deposit: SentDeposit) => void): RefusedDeposits {
  const kept = new Map<Channel, { deposit: SentDeposit; timer: ReturnType<typeof setTimeout> }>();
  /** The latest validBefore of each channel's released deposits: until then the site can still make one. */
  const releasedUntil = new Map<Channel, bigint>();
  const nowSeconds = () => BigInt(Math.floor(Date.now() / 1000));

  function release(channel: Channel, deposit: SentDeposit): void {
    const until = releasedUntil.get(channel);
    if (until === undefined || deposit.validBefore > until) releasedUntil.set(channel, deposit.validBefore);
    onRelease(channel, deposit);
  }

  function stillMakeable(channel: Channel): boolean {
    const until = releasedUntil.get(channel);
    if (until === undefined) return false;
    if (until > nowSeconds()) return true;
    releasedUntil.delete(channel);
    return false;
  }

  function drop(channel: Channel): SentDeposit | undefined {
    const entry = kept.get(channel);
    if (!entry) return undefined;
    clearTimeout(entry.timer);
    kept.delete(channel);
    return entry.deposit;
  }

  return {
    keep(channel, deposit) {
      const earlier = drop(channel);
      if (earlier && earlier !== deposit) release(channel, earlier);
      const reusableMs = Number(deposit.validBefore - BigInt(REUSE_MARGIN_SECONDS) - nowSeconds()) * 1000;
      const timer = setTimeout(
        () => {
          if (kept.get(channel)?.deposit !== deposit) return;
          kept.delete(channel);
          release(channel, deposit);
        },
        Math.max(reusableMs, 0),
      );
      timer.unref?.();
      kept.set(channel, { deposit, timer });
    },
    take(channel, needed) {
      const deposit = drop(channel);
      if (!deposit) return undefined;
      if (deposit.amount >= needed && deposit.validBefore > nowSeconds() + BigInt(REUSE_MARGIN_SECONDS)) return deposit;
      release(channel, deposit);
      return undefined;
    },
    has: (channel) => kept.has(channel) || stillMakeable(channel),
  };
}
