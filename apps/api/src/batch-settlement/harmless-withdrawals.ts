/**
 * Pending withdrawals a read of their channel found to take nothing charged (a unit asked back and
 * never finalized, say), remembered so that the escrow's log, which names them again at every run
 * for as long as its window holds their event, does not put their channel among the withdrawing
 * again: those are read at every run, ahead of any time limit, and a payer's thousands of such
 * channels would stretch every run. One is judged again once its channel has a later
 * WithdrawInitiated event than the log showed before that read (a new withdrawal), or is charged
 * above what the verdict covers: what the withdrawal leaves (the balance less it) or was claimed,
 * or the charge judged, whichever is highest. A voucher is taken within what the withdrawal leaves,
 * so a free voucher buys no read; one above it (judged on a state reused from before the
 * withdrawal, or after a deposit since) has the channel judged again. In memory: after a restart
 * each is read once more.
 */
export class HarmlessWithdrawals {
  private readonly judged = new Map<string, { logReadUpTo: bigint; coversUpTo: bigint }>();

  /**
   * A read of the channel, made at block `logReadUpTo` (one the escrow's log was read through),
   * found its pending withdrawal taking nothing charged up to `coversUpTo`; undefined, it found
   * otherwise (or none), and the channel is judged at its next event.
   */
  record(channelId: string, verdict: { logReadUpTo: bigint; coversUpTo: bigint } | undefined): void {
    if (verdict) this.judged.set(channelId, verdict);
    else this.judged.delete(channelId);
  }

  /**
   * Of the unclaimed channels the log names (each with the block of its last WithdrawInitiated
   * event), those not judged harmless since that event at what they are charged now (`unclaimed`).
   * Channels no longer unclaimed are forgotten.
   */
  unjudged(
    lastEventOf: ReadonlyMap<string, bigint>,
    unclaimed: readonly { channelId: string; charged: bigint }[],
  ): string[] {
    const chargedOf = new Map(unclaimed.map(({ channelId, charged }) => [channelId, charged]));
    for (const channelId of [...this.judged.keys()]) if (!chargedOf.has(channelId)) this.judged.delete(channelId);
    return [...lastEventOf]
      .filter(([channelId, block]) => {
        const [judged, charged] = [this.judged.get(channelId), chargedOf.get(channelId)];
        if (charged === undefined) return false;
        return !judged || block > judged.logReadUpTo || charged > judged.coversUpTo;
      })
      .map(([channelId]) => channelId);
  }
}
