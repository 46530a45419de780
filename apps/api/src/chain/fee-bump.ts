import { Logger } from '@nestjs/common';
import {
  keccak256,
  recoverTransactionAddress,
  serializeTransaction,
  type Address,
  type Hash,
  type Hex,
  type Transaction,
} from 'viem';
import type { ChainContext } from './chain-context';
import { sendSignedFromRelayer, type BeforeBroadcast } from './relayer-broadcast';
import { notFoundAsNull } from './transaction-state';

const logger = new Logger('FeeBump');

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
  | { kind: 'capped'; offered: Fees; market: Fees; cap: FeeCap }
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

/**
 * Which maximum fee a relayer transaction answers to. `urgent`: a batch-settlement claim of a
 * channel whose pending withdrawal would take what it was charged and nobody claimed, or any relayer
 * transaction stuck ahead of that claim (RELAYER_URGENT_MAX_FEE_PER_GAS_WEI); held past
 * the withdraw delay, that money is the payer's again. `routine`: every other (RELAYER_MAX_FEE_PER_GAS_WEI).
 */
export type FeeUrgency = 'routine' | 'urgent';

/** The most a relayer transaction offers per gas, in wei, and the setting that says so (for messages). */
export interface FeeCap {
  maxFeePerGas: bigint;
  setting: 'RELAYER_MAX_FEE_PER_GAS_WEI' | 'RELAYER_URGENT_MAX_FEE_PER_GAS_WEI';
}

/** The maximum fee of a relayer transaction of this urgency: the one place urgency picks a bound. */
export function feeCap(chain: Pick<ChainContext, 'feeBump'>, urgency: FeeUrgency = 'routine'): FeeCap {
  return urgency === 'urgent'
    ? { maxFeePerGas: chain.feeBump.urgentMaxFeePerGas, setting: 'RELAYER_URGENT_MAX_FEE_PER_GAS_WEI' }
    : { maxFeePerGas: chain.feeBump.maxFeePerGas, setting: 'RELAYER_MAX_FEE_PER_GAS_WEI' };
}

/**
 * Whether `fees` offer more per gas than `cap` (feeCap). No relayer transaction does: a first send
 * above it is not signed (assertFeesWithinCap), a replacement stops at it (replacementFees).
 */
export function aboveCap(cap: FeeCap, fees: Pick<Fees, 'maxFeePerGas'>): boolean {
  return fees.maxFeePerGas > cap.maxFeePerGas;
}

/** Whether a transaction sent at `sentAt` has waited past the configured time for re-pricing. */
export function pendingTooLong(chain: Pick<ChainContext, 'feeBump'>, sentAt: Date, now = Date.now()): boolean {
  return now - sentAt.getTime() >= chain.feeBump.afterSeconds * 1000;
}

/** Why a transaction is left stuck at its maximum fee, for a warning. */
export function stuckAtCap(cap: FeeCap, market: Fees): string {
  return `the chain asks ${market.maxFeePerGas} wei per gas, and a replacement would offer more than ${cap.setting} (${cap.maxFeePerGas}); it waits for fees to fall, and every later relayer transaction behind it`;
}

/**
 * What re-pricing a relayer transaction did: nothing (`waiting`: not pending long enough, no longer
 * pending, or priced as the chain asks), nothing at its maximum fee (`capped`: what the chain asks, and that maximum),
 * nothing because its record refused the replacement (`superseded`: ReplacementNotRecorded), or it
 * sent `hash` in its place.
 */
export type Repricing =
  | { kind: 'waiting' }
  | { kind: 'capped'; market: Fees; cap: FeeCap }
  | { kind: 'superseded' }
  | { kind: 'replaced'; hash: Hash; fees: Fees };

/**
 * Thrown by a replacement's `record` that did not write it down: what it replaces moved on since it
 * was read (another pass re-priced it, or its payment or hold ended). Nothing is sent.
 */
export class ReplacementNotRecorded extends Error {}

/** Logs what re-pricing `what` (its pending hash `hash`) did: a warning at the maximum fee, a note when replaced. */
export function logRepricing(log: Pick<Logger, 'warn' | 'log'>, what: string, hash: Hash, repricing: Repricing): void {
  if (repricing.kind === 'capped') log.warn(`${what} ${hash} is stuck: ${stuckAtCap(repricing.cap, repricing.market)}`);
  if (repricing.kind === 'replaced')
    log.log(
      `re-priced ${what} ${hash} stuck under the chain's fees: replaced by ${repricing.hash} at ${repricing.fees.maxFeePerGas} wei per gas`,
    );
}

/**
 * Sends the relayer's pending transaction `hash` (broadcast at `sentAt`) again at its nonce with
 * higher fees, once it has waited past RELAYER_BUMP_AFTER_SECONDS while the chain's fees outgrew
 * it: every later relayer transaction waits behind its nonce. `record` writes the new hash down
 * before it is sent (throwing sends nothing; ReplacementNotRecorded: `superseded`); the old one must
 * stay recognised, as either may land. Never above the maximum fee of its `urgency` (feeCap).
 */
export async function repriceIfStuck(
  chain: ChainContext,
  hash: Hash,
  sentAt: Date,
  record: BeforeBroadcast,
  urgency: FeeUrgency = 'routine',
): Promise<Repricing> {
  if (!pendingTooLong(chain, sentAt)) return { kind: 'waiting' };
  // Judged and sent in a turn of the relayer's (RelayerNonces.alone): its original seen pending
  // then, no broadcast here or on another instance can take that nonce before the replacement goes.
  return chain.relayerNonces.alone(async (): Promise<Repricing> => {
    const bump = await planFeeBump(chain, hash, urgency);
    if (bump.kind === 'capped') return { kind: 'capped', market: bump.market, cap: bump.cap };
    if (bump.kind !== 'replace') return { kind: 'waiting' };
    const { maxFeePerGas, maxPriorityFeePerGas } = bump.replacement;
    const sent = await broadcastReplacement(chain, bump.replacement, record).catch((error: unknown) => {
      if (error instanceof ReplacementNotRecorded) return null;
      throw error;
    });
    if (!sent) return { kind: 'superseded' };
    return { kind: 'replaced', hash: sent, fees: { maxFeePerGas, maxPriorityFeePerGas } };
  }, 'claimer');
}

/**
 * Signs a replacement of a pending relayer transaction (its nonce, higher fees: planFeeBump) and
 * broadcasts it: it takes no new nonce, and the pending count others read stays the same; run in a
 * turn of its own (repriceIfStuck). `beforeBroadcast` records its hash first, as for any broadcast.
 */
export async function broadcastReplacement(
  chain: ChainContext,
  replacement: Replacement,
  beforeBroadcast: BeforeBroadcast,
): Promise<Hash> {
  const signed = await chain.relayer.account.signTransaction!(replacement);
  await beforeBroadcast(keccak256(signed), replacement.nonce);
  return sendSignedFromRelayer(chain, signed);
}

/**
 * Reads the relayer's transaction `hash` from the node and, while it is pending and underpriced
 * for the next block, the replacement that takes its place: only its fees change, so whichever of the
 * two is mined does the same thing once. Its fees stop at the maximum of its `urgency` (feeCap).
 */
export async function planFeeBump(chain: ChainContext, hash: Hash, urgency: FeeUrgency = 'routine'): Promise<FeeBump> {
  const tx = await chain.publicClient.getTransaction({ hash }).catch(notFoundAsNull);
  if (!tx || tx.blockNumber !== null || !tx.to || tx.type !== 'eip1559') return { kind: 'not-pending' };
  // The replacement is signed from what the node says: a node that lies would have the relayer sign its call.
  const mismatch = await notOursBecause(chain, hash, tx);
  if (mismatch) {
    logger.warn(`The node's transaction ${hash} is not the relayer's own (${mismatch}): it is not re-priced`);
    return { kind: 'not-pending' };
  }
  const offered = { maxFeePerGas: tx.maxFeePerGas, maxPriorityFeePerGas: tx.maxPriorityFeePerGas };
  const now = await chainFees(chain);
  if (!now || !isUnderpriced(offered, now)) return { kind: 'priced-fine' };
  const market = currentFees(now);
  const cap = feeCap(chain, urgency);
  const fees = replacementFees(offered, market, cap.maxFeePerGas);
  if (!fees) return { kind: 'capped', offered, market, cap };
  return {
    kind: 'replace',
    offered,
    replacement: { ...sameCall(chain, tx, tx.to), ...fees },
  };
}

/**
 * Why the node's answer for `hash` is not the relayer's own transaction, or null when it is: its
 * fields, serialized with its signature on our chain, must hash to `hash` and be signed by the
 * relayer, and it moves no ether (none of the relayer's calls does).
 */
export async function notOursBecause(
  chain: Pick<ChainContext, 'chainId' | 'relayer'>,
  hash: Hash,
  tx: Transaction,
): Promise<string | null> {
  if (tx.type !== 'eip1559' || !tx.to) return 'not an EIP-1559 call';
  if (tx.value !== 0n) return `it moves ${tx.value} wei`;
  const serialized = serializeTransaction(
    {
      ...sameCall(chain, tx, tx.to),
      maxFeePerGas: tx.maxFeePerGas,
      maxPriorityFeePerGas: tx.maxPriorityFeePerGas,
      accessList: tx.accessList,
    },
    { r: tx.r, s: tx.s, yParity: tx.yParity },
  );
  if (keccak256(serialized).toLowerCase() !== hash.toLowerCase()) return 'its fields do not hash to it';
  const signer = await recoverTransactionAddress({ serializedTransaction: serialized });
  if (signer.toLowerCase() !== chain.relayer.account.address.toLowerCase()) return `signed by ${signer}`;
  return null;
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

/** The node's transaction as our chain's EIP-1559 call at its nonce, gas and value, without its fees. */
function sameCall(chain: Pick<ChainContext, 'chainId'>, tx: Transaction, to: Address) {
  return {
    type: 'eip1559',
    chainId: chain.chainId,
    nonce: tx.nonce,
    to,
    data: tx.input,
    value: tx.value,
    gas: tx.gas,
  } as const;
}
