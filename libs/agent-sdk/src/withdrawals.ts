import { BATCH_SETTLEMENT_ABI, type Hex } from '@crawlgate/core';
import type { Channel } from './channels';
import type { Payer } from './payer';

/*
 * The payer's escape hatch (the escrow's timed withdrawal): start it for what the agent did not
 * spend, then, once the channel's withdrawDelay has passed, finish it to get that USDC back.
 */

export interface WithdrawalStep {
  channelId: Hex;
  /** Atomic units: what was asked back (initiate) or paid back (finalize; the chain's event says exactly). */
  amount: string;
  txHash: Hex;
}

/**
 * initiateWithdraw(config, balance − max(signed, claimed)): the receiver keeps what the agent's
 * vouchers promised it, and can still claim it during the delay. Channels with nothing to take
 * back are skipped; every started one takes no more vouchers (`save` writes that down first).
 */
export async function initiateWithdrawals(
  payer: Payer,
  channels: Channel[],
  save: () => void,
): Promise<WithdrawalStep[]> {
  const { wallet, public: reader } = payer.chain();
  const steps: WithdrawalStep[] = [];
  for (const channel of channels.filter((c) => !c.withdrawing)) {
    const escrow = channel.domain.verifyingContract;
    const [balance, totalClaimed] = await reader.readContract({
      address: escrow,
      abi: BATCH_SETTLEMENT_ABI,
      functionName: 'channels',
      args: [channel.channelId],
    });
    const kept = channel.signed > totalClaimed ? channel.signed : totalClaimed;
    const amount = balance - kept;
    channel.withdrawing = true; // from here on, no voucher: the site would refuse it anyway
    save(); // a restarted agent too
    if (amount <= 0n) continue;
    const txHash = await wallet.writeContract({
      address: escrow,
      abi: BATCH_SETTLEMENT_ABI,
      functionName: 'initiateWithdraw',
      args: [channel.config, amount],
      account: wallet.account!,
      chain: null,
    });
    await confirmed(reader, txHash, 'initiateWithdraw');
    steps.push({ channelId: channel.channelId, amount: amount.toString(), txHash });
  }
  return steps;
}

/** finalizeWithdraw for every channel whose withdrawal was started; reverts (throws) before the delay is over. */
export async function finalizeWithdrawals(payer: Payer, channels: Channel[]): Promise<WithdrawalStep[]> {
  const { wallet, public: reader } = payer.chain();
  const steps: WithdrawalStep[] = [];
  for (const channel of channels.filter((c) => c.withdrawing)) {
    const escrow = channel.domain.verifyingContract;
    const [pending, initiatedAt] = await reader.readContract({
      address: escrow,
      abi: BATCH_SETTLEMENT_ABI,
      functionName: 'pendingWithdrawals',
      args: [channel.channelId],
    });
    if (initiatedAt === 0) continue; // nothing started, or already finished
    const txHash = await wallet.writeContract({
      address: escrow,
      abi: BATCH_SETTLEMENT_ABI,
      functionName: 'finalizeWithdraw',
      args: [channel.config],
      account: wallet.account!,
      chain: null,
    });
    await confirmed(reader, txHash, 'finalizeWithdraw');
    steps.push({ channelId: channel.channelId, amount: pending.toString(), txHash });
  }
  return steps;
}

async function confirmed(reader: ReturnType<Payer['chain']>['public'], hash: Hex, what: string): Promise<void> {
  const receipt = await reader.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error(`${what} ${hash} reverted`);
}
