import type { Hash } from 'viem';
import type { ChainContext } from './chain-context';

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
  if (receipt) {
    const head = await chain.publicClient.getBlockNumber({ cacheTime: 0 });
    return head - receipt.blockNumber + 1n >= BigInt(chain.confirmations) ? receipt.status : 'pending';
  }
  return (await chain.publicClient.getTransaction({ hash }).catch(notFoundAsNull)) ? 'pending' : 'unknown';
}
