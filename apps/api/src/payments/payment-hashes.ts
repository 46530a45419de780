import type { Hash } from 'viem';
import type { Payment } from '../generated/prisma/client';

/**
 * Every hash broadcast for one relayer transaction, `current` first, then the ones it replaced at
 * its nonce when re-priced (fee-bump.ts), as any of them may be mined; lower-case, as signed.
 */
export function hashesSent(current: string | null, replaced: readonly string[]): Hash[] {
  const all = [current, ...replaced].filter((hash): hash is string => !!hash);
  return [...new Set(all.map((hash) => hash.toLowerCase() as Hash))];
}

/** Every hash broadcast for the payment's settlement, the current one first. */
export function ownHashes(payment: Pick<Payment, 'txHash' | 'replacedTxHashes'>): Hash[] {
  return hashesSent(payment.txHash, payment.replacedTxHashes ?? []);
}

/** Whether `hash` was broadcast for the payment's settlement. */
export function isOwnHash(payment: Pick<Payment, 'txHash' | 'replacedTxHashes'>, hash: Hash): boolean {
  return ownHashes(payment).includes(hash.toLowerCase() as Hash);
}
