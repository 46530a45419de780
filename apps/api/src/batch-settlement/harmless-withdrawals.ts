import type { UnclaimedChannel } from './channel.store';

/**
 * A verdict that a channel's pending withdrawal takes nothing charged (a unit asked back and never
 * finalized, say): a read at block `logReadUpTo` (one the escrow's log was read through) found so
 * for any charge up to `coversUpTo` (what the withdrawal leaves, or was claimed, or the charge
 * judged). Kept on the channel (payment_channels.harmless_withdrawal_*), so it outlives a restart.
 */
export interface HarmlessWithdrawal {
  logReadUpTo: bigint;
  coversUpTo: bigint;
}

/**
 * Of the unclaimed channels the escrow's log names (each with the block of its last
 * WithdrawInitiated event), those to count withdrawing: all but those judged harmless since that
 * event, at what they are charged now. The log names a withdrawal again at every run for as long
 * as its window holds the event, and a withdrawing channel is read at every run, outside the run's
 * time limit: a payer's thousands of 1-unit withdrawals would stretch every run. One judged is
 * judged again after a later event (a new withdrawal), or once charged above what the verdict
 * covers: a voucher is taken within what the withdrawal leaves, so a free voucher buys no read;
 * one above it (judged on a state reused from before the withdrawal, or after a deposit since) has
 * the channel judged again.
 */
export function unjudgedWithdrawals(
  lastEventOf: ReadonlyMap<string, bigint>,
  unclaimed: readonly UnclaimedChannel[],
): string[] {
  const byId = new Map(unclaimed.map((channel) => [channel.channelId, channel]));
  return [...lastEventOf]
    .filter(([channelId, block]) => {
      const channel = byId.get(channelId);
      if (!channel) return false;
      const { harmless, charged } = channel;
      return !harmless || block > harmless.logReadUpTo || charged > harmless.coversUpTo;
    })
    .map(([channelId]) => channelId);
}
