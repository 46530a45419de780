import type { Hash } from 'viem';
import type { Payment } from '../generated/prisma/client';

/**
 * Every hash broadcast for the payment's settlement, the current one first (lower-case, as signed):
 * a re-priced settlement (fee-bump.ts) keeps the ones it replaced, as any of them may be mined.
 */
export function ownHashes(payment: Pick<Payment, 'txHash' | 'replacedTxHashes'>): Hash[] {
  const all = [payment.txHash, ...(payment.replacedTxHashes ?? [])].filter((hash): hash is string => !!hash);
  return [...new Set(all.map((hash) => hash.toLowerCase() as Hash))];
}

/** Whether `hash` was broadcast for the payment's settlement. */
export function isOwnHash(payment: Pick<Payment, 'txHash' | 'replacedTxHashes'>, hash: Hash): boolean {
  return ownHashes(payment).includes(hash.toLowerCase() as Hash);
}
