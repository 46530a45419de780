import type { Hash, TransactionReceipt } from 'viem';
import type { ChainContext } from '../chain/chain-context';
import { settlementCall, type SignedAuthorization } from './authorization-checks';

/** Broadcasts transferWithAuthorization from the relayer; the hash is known once the node accepts it. */
export function sendSettlement(chain: ChainContext, auth: SignedAuthorization): Promise<Hash> {
  return chain.relayer.writeContract(settlementCall(chain, auth) as never);
}

/** The receipt once it has enough confirmations, or null when `timeoutMs` passes first. */
export async function waitForReceipt(chain: ChainContext, hash: Hash, timeoutMs: number): Promise<TransactionReceipt | null> {
  if (timeoutMs <= 0) return null;
  try {
    return await chain.publicClient.waitForTransactionReceipt({ hash, confirmations: chain.confirmations, timeout: timeoutMs });
  } catch (error) {
    if ((error as { name?: unknown }).name === 'WaitForTransactionReceiptTimeoutError') return null;
    throw error;
  }
}
