import { BATCH_SETTLEMENT_ABI, type Hex } from '@crawlgate/core';
import { isAddressEqual, parseEventLogs, type PublicClient } from 'viem';
import type { Channel } from './channels';

/*
 * x402's cooperative refund, as the agent believes it: only by the chain. A site's answer names a
 * transaction; what came back is what that transaction's Refunded events of this very channel say,
 * and only if it was mined after the agent asked (so a transaction already counted, this channel's
 * earlier refund, is never counted again).
 */

/** How long a named transaction may take to show on the agent's node: a hostile site must not hold the agent for ever. */
const RECEIPT_TIMEOUT_MS = 10_000;

export type RefundCheck = { ok: true; amount: bigint } | { ok: false; detail: string };

/** What `txHash` returned of `channel` to its payer, when it was mined after block `askedAfter`. */
export async function refundedBy(
  reader: PublicClient,
  channel: Channel,
  txHash: Hex,
  askedAfter: bigint,
): Promise<RefundCheck> {
  let receipt;
  try {
    receipt = await reader.waitForTransactionReceipt({ hash: txHash, timeout: RECEIPT_TIMEOUT_MS });
  } catch (error) {
    return { ok: false, detail: `no receipt for ${txHash}: ${(error as Error).message.split('\n')[0]}` };
  }
  if (receipt.status !== 'success') return { ok: false, detail: `${txHash} reverted` };
  if (receipt.blockNumber <= askedAfter)
    return { ok: false, detail: `${txHash} was mined before this refund was asked for` };
  const escrow = channel.domain.verifyingContract;
  const amount = parseEventLogs({ abi: BATCH_SETTLEMENT_ABI, eventName: 'Refunded', logs: receipt.logs })
    .filter(
      (log) =>
        isAddressEqual(log.address, escrow) && log.args.channelId.toLowerCase() === channel.channelId.toLowerCase(),
    )
    .reduce((sum, log) => sum + log.args.amount, 0n);
  if (amount === 0n) return { ok: false, detail: `${txHash} refunded nothing of channel ${channel.channelId}` };
  return { ok: true, amount };
}
