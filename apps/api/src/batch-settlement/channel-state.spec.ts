import { BATCH_REASONS } from '@crawlgate/core';
import type { OnChainChannel } from '../chain/escrow';
import {
  chargedAtStake,
  chargedBase,
  claimableTotal,
  claimIsUrgent,
  correction,
  publicTotal,
  spendableOf,
  takesWithoutRead,
  withdrawableAt,
  withdrawalTakesCharged,
} from './channel-state';

const ID = `0x${'c'.repeat(64)}` as const;
const state = (changes: Partial<OnChainChannel> = {}): OnChainChannel => ({
  balance: 50_000n,
  totalClaimed: 10_000n,
  withdrawal: null,
  refundNonce: 0n,
  ...changes,
});

describe('channel state', () => {
  it('counts as charged our record, never below what the chain says is claimed', () => {
    expect(chargedBase(null, state())).toBe(10_000n);
    expect(chargedBase({ charged: 5_000n }, state())).toBe(10_000n);
    expect(chargedBase({ charged: 30_000n }, state())).toBe(30_000n);
  });

  it('leaves a pending withdrawal out of what may be spent', () => {
    expect(spendableOf(state())).toBe(50_000n);
    expect(spendableOf(state({ withdrawal: { amount: 20_000n, initiatedAt: 1 } }))).toBe(30_000n);
  });

  it('calls a claim urgent only while a pending withdrawal would take what was charged and nobody claimed', () => {
    const withdrawing = (amount: bigint, changes: Partial<OnChainChannel> = {}) =>
      state({ withdrawal: { amount, initiatedAt: 1_000 }, ...changes });
    expect(withdrawalTakesCharged(30_000n, state())).toBe(false); // no withdrawal
    expect(withdrawalTakesCharged(30_000n, withdrawing(40_000n))).toBe(true); // leaves 10,000 for 30,000 charged
    expect(withdrawalTakesCharged(30_000n, withdrawing(20_000n))).toBe(false); // asks back only what is unspent
    expect(withdrawalTakesCharged(30_000n, withdrawing(40_000n, { totalClaimed: 30_000n }))).toBe(false); // claimed
    expect(withdrawableAt(900, withdrawing(40_000n))).toEqual(new Date(1_900_000));
    expect(withdrawableAt(900, state())).toBeNull();
  });

  it('counts at stake what a pending withdrawal would take of what was charged and nobody claimed', () => {
    const withdrawing = (amount: bigint, changes: Partial<OnChainChannel> = {}) =>
      state({ withdrawal: { amount, initiatedAt: 1_000 }, ...changes });
    expect(chargedAtStake(30_000n, state())).toBe(0n); // no withdrawal
    expect(chargedAtStake(30_000n, withdrawing(40_000n))).toBe(20_000n); // 10,000 left, 10,000 claimed
    expect(chargedAtStake(30_000n, withdrawing(50_000n))).toBe(20_000n); // all of it: the claimed 10,000 stays
    expect(chargedAtStake(30_000n, withdrawing(20_000n))).toBe(0n); // only what is unspent
    expect(chargedAtStake(70_000n, withdrawing(50_000n))).toBe(40_000n); // at most what the channel holds
  });

  it('calls a claim urgent only when its withdrawal takes at least CLAIM_MIN_MICROS and may be finalized within half its delay', () => {
    const DELAY = 86_400;
    const START = 1_000_000; // the withdrawal's start (s)
    const withdrawing = (amount: bigint) => state({ withdrawal: { amount, initiatedAt: START } });
    const at = (seconds: number) => new Date((START + seconds) * 1000);
    const urgent = (charged: bigint, s: OnChainChannel, now: Date, claimMinMicros = 20_000n) =>
      claimIsUrgent(charged, s, { withdrawDelaySeconds: DELAY, claimMinMicros, now });
    const late = at(DELAY / 2);
    // 20,000 at stake, the deadline half a delay away: urgent.
    expect(urgent(30_000n, withdrawing(40_000n), late)).toBe(true);
    expect(urgent(30_000n, withdrawing(40_000n), at(DELAY + 60))).toBe(true); // past it: still claimable until finalized
    // The deadline further than half a delay: routine (the first half waits out a spike).
    expect(urgent(30_000n, withdrawing(40_000n), at(DELAY / 2 - 1))).toBe(false);
    expect(urgent(30_000n, withdrawing(40_000n), at(0))).toBe(false);
    // Less at stake than a claim is worth (one page): routine, however near the deadline.
    expect(urgent(20_000n, withdrawing(40_000n), late)).toBe(false); // 10,000 at stake
    expect(urgent(20_000n, withdrawing(40_000n), late, 10_000n)).toBe(true);
    // No withdrawal, or one only of what is unspent: nothing at stake.
    expect(urgent(30_000n, state(), late, 1n)).toBe(false);
    expect(urgent(30_000n, withdrawing(20_000n), late, 1n)).toBe(false);
  });

  it('claims what was charged, but never above what the channel holds', () => {
    expect(claimableTotal(30_000n, state())).toBe(30_000n);
    expect(claimableTotal(70_000n, state())).toBe(50_000n);
  });

  it('takes a voucher on a recent state only as a fresh read would, on a channel recorded and untouched by refunds', () => {
    const row = { charged: 30_000n, signature: '0xabc', refundHeld: false, refundsThrough: 0n, published: 0n };
    expect(takesWithoutRead(row, state(), 40_000n, 10_000n)).toBe(true);
    expect(takesWithoutRead(row, state(), 50_000n, 20_000n)).toBe(true); // up to the balance
    // A channel this API does not record yet, or records behind the chain's claims.
    expect(takesWithoutRead(null, state(), 20_000n, 10_000n)).toBe(false);
    expect(takesWithoutRead({ ...row, charged: 5_000n }, state(), 15_000n, 10_000n)).toBe(false);
    // A refund holds it, or landed after the state was read.
    expect(takesWithoutRead({ ...row, refundHeld: true }, state(), 40_000n, 10_000n)).toBe(false);
    expect(takesWithoutRead({ ...row, refundsThrough: 1n }, state(), 40_000n, 10_000n)).toBe(false);
    expect(takesWithoutRead({ ...row, refundsThrough: 1n }, state({ refundNonce: 1n }), 40_000n, 10_000n)).toBe(true);
    // Anything the checks would refuse: a total other than charged + price, above what may be spent, an empty channel.
    expect(takesWithoutRead(row, state(), 30_000n, 10_000n)).toBe(false);
    expect(takesWithoutRead(row, state(), 50_000n, 10_000n)).toBe(false);
    expect(takesWithoutRead(row, state(), 60_000n, 30_000n)).toBe(false);
    expect(takesWithoutRead(row, state({ withdrawal: { amount: 20_000n, initiatedAt: 1 } }), 40_000n, 10_000n)).toBe(
      false,
    );
    expect(takesWithoutRead({ ...row, charged: 0n }, state({ balance: 0n, totalClaimed: 0n }), 0n, 0n)).toBe(false);
  });

  it('states x402’s corrective 402 with the payer’s own voucher only when it is for the charged total', () => {
    const withVoucher = correction(
      ID,
      30_000n,
      { charged: 30_000n, signature: '0xabc', published: 0n },
      state(),
      40_000n,
      20_000n,
    );
    expect(withVoucher.getStatus()).toBe(402);
    expect(withVoucher.getResponse()).toMatchObject({
      reason: BATCH_REASONS.cumulativeMismatch,
      channel_state: { channelId: ID, balance: '50000', chargedCumulativeAmount: '30000' },
      voucher_state: { signedMaxClaimable: '30000', signature: '0xabc' },
    });
    const behind = correction(
      ID,
      30_000n,
      { charged: 20_000n, signature: '0xabc', published: 0n },
      state(),
      40_000n,
      20_000n,
    );
    expect(behind.getResponse()).not.toHaveProperty('voucher_state');
  });

  it('tells the payer’s voucher only to a request whose voucher is above every public one (claimed, or in a claim sent)', () => {
    const row = { charged: 30_000n, signature: '0xabc', published: 20_000n };
    const told = (sent: bigint, at = state()) =>
      'voucher_state' in (correction(ID, 30_000n, row, at, 40_000n, sent).getResponse() as object);
    expect(told(20_000n)).toBe(false); // a claim carries it, pending or not
    expect(told(10_000n, state({ totalClaimed: 25_000n }))).toBe(false);
    expect(told(25_000n, state({ totalClaimed: 25_000n }))).toBe(false);
    expect(told(30_000n)).toBe(true);
    expect(publicTotal(row, state())).toBe(20_000n);
    expect(publicTotal(row, state({ totalClaimed: 25_000n }))).toBe(25_000n);
    expect(publicTotal(null, state())).toBe(10_000n);
  });
});
