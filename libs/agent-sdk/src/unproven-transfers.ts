/*
 * Transfers sent for a page whose proof got no answer (lost on the way back, the API failing or
 * still settling): the transfer may have opened the gate, whose API answers the same proof again
 * with its token while the gate lives (a proof is credited at most once). The next fetch of the
 * page posts that proof again instead of sending a second transfer.
 */

export interface UnprovenTransfer {
  verifyUrl: string;
  /** The body posted: `{tx_hash, signature, payer}`. */
  proof: string;
  /** Epoch milliseconds: the gate expires then, and its API refuses the proof after. */
  until: number;
}

/** Pages remembered at most; the oldest is dropped first (it is the likeliest to have expired). */
const MAX_UNPROVEN = 1_000;

export class UnprovenTransfers {
  private readonly byPage = new Map<string, UnprovenTransfer>();

  keep(page: string, transfer: UnprovenTransfer): void {
    this.byPage.delete(page);
    this.byPage.set(page, transfer);
    if (this.byPage.size > MAX_UNPROVEN) this.byPage.delete(this.byPage.keys().next().value!);
  }

  /** The page's transfer still worth proving, if any; one past its gate's end is dropped. */
  get(page: string, now = Date.now()): UnprovenTransfer | undefined {
    const transfer = this.byPage.get(page);
    if (transfer && !(now < transfer.until)) this.byPage.delete(page);
    return transfer && now < transfer.until ? transfer : undefined;
  }

  forget(page: string): void {
    this.byPage.delete(page);
  }
}

/** A verify answer that says nothing of the proof yet: still settling (202), a limit, a timeout, a failure. */
export function isUnanswered(status: number): boolean {
  return status === 202 || status === 408 || status === 429 || status >= 500;
}
