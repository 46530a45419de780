import type { Hash, TransactionReceipt } from 'viem';
import { confirmedBlockNow, hasConfirmationsNow, type ChainContext } from './chain-context';

/** viem's "not found" for a receipt or transaction the node does not know: null; anything else is thrown. */
export function notFoundAsNull(error: unknown): null {
  const name = (error as { name?: unknown })?.name;
  if (name === 'TransactionReceiptNotFoundError' || name === 'TransactionNotFoundError') return null;
  throw error;
}

/**
 * What the node says of a transaction now: mined with the chain's confirmations (and how it ended),
 * on its way (in the mempool, or mined with fewer), or unknown to it.
 */
export async function transactionState(
  chain: Pick<ChainContext, 'publicClient' | 'confirmations'>,
  hash: Hash,
): Promise<'success' | 'reverted' | 'pending' | 'unknown'> {
  const receipt = await chain.publicClient.getTransactionReceipt({ hash }).catch(notFoundAsNull);
  if (receipt) return (await hasConfirmationsNow(chain, receipt)) ? receipt.status : 'pending';
  return (await chain.publicClient.getTransaction({ hash }).catch(notFoundAsNull)) ? 'pending' : 'unknown';
}

/**
 * The receipt if it is this very transaction's: viem answers a replacement's (another transaction of
 * the relayer's at its nonce, from another instance) as if it were, and a node that lies or lags may
 * answer another's; that one says nothing of ours.
 */
export function ownReceipt(hash: Hash, receipt: TransactionReceipt | null): TransactionReceipt | null {
  return receipt && receipt.transactionHash.toLowerCase() === hash.toLowerCase() ? receipt : null;
}

/**
 * Whether a transaction of the relayer's at `nonce` was mined as deep as the chain's confirmations:
 * one the node does not know can then never land (no other transaction can take that nonce now).
 * Shallower, a reorg may take the block back, and a copy of ours still in some node's mempool land.
 */
export async function relayerNonceUsed(
  chain: Pick<ChainContext, 'publicClient' | 'relayer' | 'confirmations'>,
  nonce: number,
): Promise<boolean> {
  const mined = await chain.publicClient.getTransactionCount({
    address: chain.relayer.account.address,
    blockNumber: await confirmedBlockNow(chain),
  });
  return mined > nonce;
}

/**
 * Where a relayer transaction written down before its broadcast stands: `pending` (on its way),
 * `landed` (mined successfully with the confirmations), `reverted` (mined, and reverted: the relayer
 * paid its gas), `dead` (unknown to the node while its nonce went to another transaction: it never
 * lands), or `unknown` (the node does not know it and its nonce is still free: a broadcast refused,
 * or a replaced copy; it may yet be sent).
 */
export async function sentTransactionFate(
  chain: Pick<ChainContext, 'publicClient' | 'relayer' | 'confirmations'>,
  sent: { txHash: string; nonce: number | null },
): Promise<'pending' | 'landed' | 'reverted' | 'dead' | 'unknown'> {
  const state = await transactionState(chain, sent.txHash as Hash);
  if (state === 'pending') return 'pending';
  if (state === 'success') return 'landed';
  if (state === 'reverted') return 'reverted';
  if (sent.nonce !== null && (await relayerNonceUsed(chain, sent.nonce))) return 'dead';
  return 'unknown';
}
