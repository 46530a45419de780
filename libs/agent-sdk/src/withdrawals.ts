import { BATCH_SETTLEMENT_ABI, USDC_ABI, type Hex } from '@crawlgate/core';
import { isAddressEqual, parseEventLogs } from 'viem';
import { ChannelBook, escrowChannelOf, type Channel } from './channels';
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
 * vouchers promised it, and can still claim it during the delay. Every channel at once, each after
 * a voucher of it in flight. A started channel takes no more vouchers; the file says so before the
 * transaction. A channel with nothing pending on chain is tried again, so a transaction that
 * failed (no gas), or a deposit that landed after an earlier withdrawal, is not left in escrow.
 */
export async function initiateWithdrawals(payer: Payer, book: ChannelBook): Promise<WithdrawalStep[]> {
  const { wallet, public: reader } = payer.chain();
  // Every channel at once, each after its own voucher in flight: one site holding its answer (a send
  // may wait minutes, and is resent) holds up no other channel's withdrawal.
  const started = (await onNodesChain(reader, book.all())).map((channel) =>
    book.exclusive(ChannelBook.keyOf(channel), async (): Promise<WithdrawalStep | undefined> => {
      const escrow = channel.domain.verifyingContract;
      const [{ balance, totalClaimed }, [, initiatedAt]] = await Promise.all([
        escrowChannelOf(reader, channel),
        reader.readContract({
          address: escrow,
          abi: BATCH_SETTLEMENT_ABI,
          functionName: 'pendingWithdrawals',
          args: [channel.channelId],
        }) as Promise<readonly [bigint, number]>,
      ]);
      channel.withdrawing = true; // from here on, no voucher: the site would refuse it anyway
      book.save(); // a restarted agent too
      if (initiatedAt !== 0) return undefined; // started already: finalizeWithdraw finishes it
      const kept = channel.signed > totalClaimed ? channel.signed : totalClaimed;
      const amount = balance - kept;
      if (amount <= 0n) return undefined;
      const txHash = await payer.inTurn(() =>
        wallet.writeContract({
          address: escrow,
          abi: BATCH_SETTLEMENT_ABI,
          functionName: 'initiateWithdraw',
          args: [channel.config, amount],
          account: wallet.account!,
          chain: null,
        }),
      );
      await confirmed(reader, txHash, 'initiateWithdraw');
      return { channelId: channel.channelId, amount: amount.toString(), txHash };
    }),
  );
  const outcomes = await Promise.allSettled(started);
  const failed = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason; // the others went on: the next call finds them started
  return outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' && outcome.value ? [outcome.value] : []));
}

/**
 * finalizeWithdraw for every channel whose withdrawal was started; reverts (throws) before the delay
 * is over. What came back is what the token's Transfer from the escrow to the payer says, in the
 * transaction's receipt; `returned` is told it (the agent credits its budget).
 */
export async function finalizeWithdrawals(
  payer: Payer,
  channels: Channel[],
  returned: (amount: bigint) => Promise<void>,
): Promise<WithdrawalStep[]> {
  const { wallet, public: reader } = payer.chain();
  const steps: WithdrawalStep[] = [];
  for (const channel of await onNodesChain(
    reader,
    channels.filter((c) => c.withdrawing),
  )) {
    const escrow = channel.domain.verifyingContract;
    const [, initiatedAt] = await reader.readContract({
      address: escrow,
      abi: BATCH_SETTLEMENT_ABI,
      functionName: 'pendingWithdrawals',
      args: [channel.channelId],
    });
    if (initiatedAt === 0) continue; // nothing started, or already finished
    const txHash = await payer.inTurn(() =>
      wallet.writeContract({
        address: escrow,
        abi: BATCH_SETTLEMENT_ABI,
        functionName: 'finalizeWithdraw',
        args: [channel.config],
        account: wallet.account!,
        chain: null,
      }),
    );
    const receipt = await confirmed(reader, txHash, 'finalizeWithdraw');
    const amount = parseEventLogs({ abi: USDC_ABI, eventName: 'Transfer', logs: receipt.logs })
      .filter(
        (log) =>
          isAddressEqual(log.address, channel.config.token) &&
          isAddressEqual(log.args.from, escrow) &&
          isAddressEqual(log.args.to, channel.config.payer),
      )
      .reduce((sum, log) => sum + log.args.value, 0n);
    await returned(amount);
    steps.push({ channelId: channel.channelId, amount: amount.toString(), txHash });
  }
  return steps;
}

/**
 * The channels on the chain of the agent's node: another chain's escrow at the same address holds
 * nothing of a channel, and reading it there would mark the channel withdrawing with nothing started.
 * An agent whose rpcUrl is that chain's withdraws them.
 */
async function onNodesChain(reader: ReturnType<Payer['chain']>['public'], channels: Channel[]): Promise<Channel[]> {
  const chainId = await reader.getChainId();
  return channels.filter((channel) => channel.domain.chainId === chainId);
}

async function confirmed(reader: ReturnType<Payer['chain']>['public'], hash: Hex, what: string) {
  const receipt = await reader.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error(`${what} ${hash} reverted`);
  return receipt;
}
