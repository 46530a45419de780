import { BATCH_REASONS, type ChannelStateView, type VoucherCorrection } from '@crawlgate/core';
import type { Hex } from 'viem';
import type { OnChainChannel } from '../chain/escrow';
import { ApiError } from '../http/api-error';
import type { ChannelRecord } from './channel.store';

/*
 * A channel as vouchers and refunds are judged against it: what it has been charged, what of it may
 * still be spent, and how x402 states it (channelState, the corrective 402).
 */

/** What the channel has been charged: our record, never below what the chain says is claimed. */
export function chargedBase(row: Pick<ChannelRecord, 'charged'> | null, state: OnChainChannel): bigint {
  const stored = row?.charged ?? 0n;
  return stored > state.totalClaimed ? stored : state.totalClaimed;
}

export function channelState(channelId: Hex, state: OnChainChannel, charged: bigint): ChannelStateView {
  return {
    channelId,
    balance: state.balance.toString(),
    totalClaimed: state.totalClaimed.toString(),
    withdrawRequestedAt: state.withdrawal?.initiatedAt ?? 0,
    refundNonce: state.refundNonce.toString(),
    chargedCumulativeAmount: charged.toString(),
  };
}

/**
 * The total a claim of the channel may record: what it was charged, never above what it holds (one
 * row above its balance reverts the whole claim transaction, the other channels' rows with it).
 */
export function claimableTotal(charged: bigint, state: OnChainChannel): bigint {
  return charged < state.balance ? charged : state.balance;
}

/** A pending withdrawal may take its amount once its delay is over: what it may take is not spendable. */
export function spendableOf(state: OnChainChannel): bigint {
  return state.balance - (state.withdrawal?.amount ?? 0n);
}

/**
 * What the channel's pending withdrawal, once its delay is over, would take of what it was charged
 * and nobody claimed (the escrow pays a withdrawal only from what is not claimed): what a claim of
 * it may still record (claimableTotal) above what would be left it and above what is claimed. 0
 * with no withdrawal, or one that asks back only what is unspent.
 */
export function chargedAtStake(charged: bigint, state: OnChainChannel): bigint {
  if (state.withdrawal === null) return 0n;
  const left = spendableOf(state);
  const floor = left > state.totalClaimed ? left : state.totalClaimed;
  const claimable = claimableTotal(charged, state);
  return claimable > floor ? claimable - floor : 0n;
}

/**
 * Whether the channel's pending withdrawal would take some of what it was charged and nobody
 * claimed (chargedAtStake): its claim is due at once, at routine fees (claimIsUrgent says when it
 * may pay more). One that asks back only what is unspent (1 unit, each run) is not: it costs the
 * relayer no claim.
 */
export function withdrawalTakesCharged(charged: bigint, state: OnChainChannel): boolean {
  return chargedAtStake(charged, state) > 0n;
}

/**
 * Whether the channel's claim is urgent (may be sent, and re-priced, up to
 * RELAYER_URGENT_MAX_FEE_PER_GAS_WEI): only when it is worth it and needed now, that is when
 * its pending withdrawal would take at least `claimMinMicros` (CLAIM_MIN_MICROS, the size a claim
 * is worth its gas at) of what it was charged and nobody claimed (chargedAtStake), and may be
 * finalized within half of the channel's withdraw delay from `now`. The first half of the delay
 * waits out a fee spike at the routine maximum (the claimer runs at least every quarter delay, so
 * at least two runs remain after it); a withdrawal taking less is claimed at routine fees only, so
 * that nobody can make the relayer pay urgent fees for a page or two.
 */
export function claimIsUrgent(
  charged: bigint,
  state: OnChainChannel,
  { withdrawDelaySeconds, claimMinMicros, now }: { withdrawDelaySeconds: number; claimMinMicros: bigint; now: Date },
): boolean {
  const deadline = withdrawableAt(withdrawDelaySeconds, state);
  return (
    deadline !== null &&
    chargedAtStake(charged, state) >= claimMinMicros &&
    now.getTime() >= deadline.getTime() - (withdrawDelaySeconds * 1000) / 2
  );
}

/** When a channel's pending withdrawal may be finalized (the escrow's deadline for its claim); null when none. */
export function withdrawableAt(withdrawDelaySeconds: number, state: OnChainChannel): Date | null {
  return state.withdrawal ? new Date((state.withdrawal.initiatedAt + withdrawDelaySeconds) * 1000) : null;
}

/**
 * Whether a channel state read a moment ago may judge a voucher with no new read of the chain: only
 * when it takes the voucher exactly as the checks below would, against a channel this API already
 * records, that no refund holds or has moved since that state. Anything else (a refusal, a corrective
 * 402, a channel first seen or behind the chain) is judged on a fresh read. What a recent state can
 * miss: a deposit made since (it only adds), and a withdrawal started since, which the escrow pays out
 * only after the withdraw delay, after the claimer collects what was charged (it claims at once then).
 */
export function takesWithoutRead(
  row: ChannelRecord | null,
  state: OnChainChannel,
  total: bigint,
  price: bigint,
): boolean {
  return (
    row !== null &&
    !row.refundHeld &&
    row.refundsThrough <= state.refundNonce &&
    row.charged >= state.totalClaimed &&
    total === row.charged + price &&
    state.balance > 0n &&
    total <= spendableOf(state)
  );
}

/**
 * The highest voucher total anyone may hold without the payer: what claim transactions carried
 * (ours, marked once the chain's fees are within the relayer's maximum, before its gas estimate
 * shows the node its calldata, sent or not, pending or reverted alike; one refused for fees before
 * that estimate marks nothing) and what the chain shows claimed.
 * Such a voucher proves nothing about who sends it.
 */
export function publicTotal(row: Pick<ChannelRecord, 'published'> | null, state: OnChainChannel): bigint {
  const published = row?.published ?? 0n;
  return published > state.totalClaimed ? published : state.totalClaimed;
}

/**
 * x402's corrective 402: the server's total and, when it holds one, the payer's own last voucher.
 * `expected` is the total the voucher had to carry; `sent` the one it carried. The last voucher goes
 * only to a request whose voucher is above the public total (publicTotal): the last one, for
 * exactly what was charged, is also x402's refund request. Who shows only a public voucher learns
 * the totals, which the chain shows too.
 */
export function correction(
  channelId: Hex,
  charged: bigint,
  row: Pick<ChannelRecord, 'charged' | 'signature' | 'published'> | null,
  state: OnChainChannel,
  expected: bigint,
  sent: bigint,
): ApiError {
  const voucherState =
    row?.signature && row.charged === charged && sent > publicTotal(row, state)
      ? { signedMaxClaimable: charged.toString(), signature: row.signature as Hex }
      : undefined;
  const body: Omit<VoucherCorrection, 'detail'> = {
    reason: BATCH_REASONS.cumulativeMismatch,
    channel_state: channelState(channelId, state, charged),
    ...(voucherState ? { voucher_state: voucherState } : {}),
  };
  return new ApiError(
    402,
    `The voucher's total is ${sent}; this channel has been charged ${charged}, so this request takes a voucher for exactly ${expected}`,
    body,
  );
}
