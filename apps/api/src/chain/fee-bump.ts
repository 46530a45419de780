import type { Address, Hash, Hex } from 'viem';
import type { ChainContext } from './chain-context';
import { notFoundAsNull } from './transaction-state';

/** What a transaction offers per gas (EIP-1559), in wei. */
export interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/** A pending relayer transaction again, at its nonce, with the same call and gas and higher fees. */
export interface Replacement extends Fees {
  type: 'eip1559';
  chainId: number;
  nonce: number;
  to: Address;
  data: Hex;
  value: bigint;
  gas: bigint;
}

/**
 * What to do about a relayer transaction: nothing when the node holds no pending one by that hash
 * (mined, or unknown) or its fees still meet the chain's; `capped` when a replacement would have to
 * offer more than the configured maximum (it is left to wait); else the replacement to send.
 */
export type FeeBump =
  | { kind: 'not-pending' }
  | { kind: 'priced-fine' }
  | { kind: 'capped'; offered: Fees; market: Fees }
  | { kind: 'replace'; replacement: Replacement; offered: Fees };

/**
 * The smallest fee a node takes to replace a pending transaction that offered `fee`: geth and anvil
 * refuse a replacement that raises maxFeePerGas or maxPriorityFeePerGas by less than 12.5 %.
 */
export function minimumReplacementFee(fee: bigint): bigint {
  return (fee * 9n + 7n) / 8n; // fee × 1.125, rounded up
}

/** What the chain charges now: the next block's base fee, and the tip its miners take (eth_maxPriorityFeePerGas). */
export interface ChainFees {
  baseFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/**
 * Whether the chain now asks more than the transaction offered: the tip it would pay in the next
 * block (what its fee cap leaves over the base fee, at most its own tip; below zero when it cannot
 * be included at all) is under what miners take.
 */
export function isUnderpriced(offered: Fees, chain: ChainFees): boolean {
  const tip = min(offered.maxPriorityFeePerGas, offered.maxFeePerGas - chain.baseFeePerGas);
  return tip < chain.maxPriorityFeePerGas;
}

/** The fees a transaction sent now offers: as viem prices one, the base fee with a fifth more room, plus the tip. */
export function currentFees(chain: ChainFees): Fees {
  return {
    maxFeePerGas: (chain.baseFeePerGas * 6n) / 5n + chain.maxPriorityFeePerGas,
    maxPriorityFeePerGas: chain.maxPriorityFeePerGas,
  };
}

/**
 * The fees a replacement offers: the chain's, and at least the replacement minimum over what was
 * offered, never above `cap`. null when the minimum itself is above the cap: the transaction cannot
 * be re-priced without burning more than allowed, so it waits for the fees to fall.
 */
export function replacementFees(offered: Fees, market: Fees, cap: bigint): Fees | null {
  const leastFee = minimumReplacementFee(offered.maxFeePerGas);
  const leastTip = minimumReplacementFee(offered.maxPriorityFeePerGas);
  const maxFeePerGas = min(max(market.maxFeePerGas, leastFee), cap);
  const maxPriorityFeePerGas = min(max(market.maxPriorityFeePerGas, leastTip), maxFeePerGas);
  if (maxFeePerGas < leastFee || maxPriorityFeePerGas < leastTip) return null;
  return { maxFeePerGas, maxPriorityFeePerGas };
}

/** Whether a transaction sent at `sentAt` has waited past the configured time for re-pricing. */
export function pendingTooLong(chain: Pick<ChainContext, 'feeBump'>, sentAt: Date, now = Date.now()): boolean {
  return now - sentAt.getTime() >= chain.feeBump.afterSeconds * 1000;
}

/** Why a transaction is left stuck at the maximum fee, for a warning. */
export function stuckAtCap(chain: Pick<ChainContext, 'feeBump'>, market: Fees): string {
  return `the chain asks ${market.maxFeePerGas} wei per gas, and a replacement would offer more than RELAYER_MAX_FEE_PER_GAS_WEI (${chain.feeBump.maxFeePerGas}); it waits for fees to fall, and every later relayer transaction behind it`;
}

/**
 * Reads the relayer's transaction `hash` from the node and, while it is pending and underpriced
 * for the next block, the replacement that takes its place: only its fees change, so whichever of the
 * two is mined does the same thing once.
 */
export async function planFeeBump(chain: ChainContext, hash: Hash): Promise<FeeBump> {
  const tx = await chain.publicClient.getTransaction({ hash }).catch(notFoundAsNull);
  if (!tx || tx.blockNumber !== null || !tx.to || tx.type !== 'eip1559') return { kind: 'not-pending' };
  // Only the relayer's own nonce is ours to replace.
  if (tx.from.toLowerCase() !== chain.relayer.account.address.toLowerCase()) return { kind: 'not-pending' };
  const offered = { maxFeePerGas: tx.maxFeePerGas, maxPriorityFeePerGas: tx.maxPriorityFeePerGas };
  const now = await chainFees(chain);
  if (!now || !isUnderpriced(offered, now)) return { kind: 'priced-fine' };
  const market = currentFees(now);
  const fees = replacementFees(offered, market, chain.feeBump.maxFeePerGas);
  if (!fees) return { kind: 'capped', offered, market };
  return {
    kind: 'replace',
    offered,
    replacement: {
      type: 'eip1559',
      chainId: chain.chainId,
      nonce: tx.nonce,
      to: tx.to,
      data: tx.input,
      value: tx.value,
      gas: tx.gas,
      ...fees,
    },
  };
}

/**
 * The base fee of the block the node would mine next (its pending block: the latest block's says
 * what was charged, not what will be; the latest's from a node that serves no pending block) and
 * the tip miners take; null on a chain without base fees.
 */
async function chainFees(chain: ChainContext): Promise<ChainFees | null> {
  const [next, maxPriorityFeePerGas] = await Promise.all([
    chain.publicClient
      .getBlock({ blockTag: 'pending' })
      .catch(() => chain.publicClient.getBlock({ blockTag: 'latest' })),
    chain.publicClient.estimateMaxPriorityFeePerGas(),
  ]);
  return next.baseFeePerGas === null ? null : { baseFeePerGas: next.baseFeePerGas, maxPriorityFeePerGas };
}

function max(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

function min(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
