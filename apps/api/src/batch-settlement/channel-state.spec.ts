import { BATCH_REASONS } from '@crawlgate/core';
import type { OnChainChannel } from '../chain/escrow';
import { chargedBase, claimableTotal, correction, spendableOf } from './channel-state';

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

  it('claims what was charged, but never above what the channel holds', () => {
    expect(claimableTotal(30_000n, state())).toBe(30_000n);
    expect(claimableTotal(70_000n, state())).toBe(50_000n);
  });

  it('states x402’s corrective 402 with the payer’s own voucher only when it is for the charged total', () => {
    const withVoucher = correction(ID, 30_000n, { charged: 30_000n, signature: '0xabc' }, state(), 40_000n, 20_000n);
    expect(withVoucher.getStatus()).toBe(402);
    expect(withVoucher.getResponse()).toMatchObject({
      reason: BATCH_REASONS.cumulativeMismatch,
      channel_state: { channelId: ID, balance: '50000', chargedCumulativeAmount: '30000' },
      voucher_state: { signedMaxClaimable: '30000', signature: '0xabc' },
    });
    const behind = correction(ID, 30_000n, { charged: 20_000n, signature: '0xabc' }, state(), 40_000n, 20_000n);
    expect(behind.getResponse()).not.toHaveProperty('voucher_state');
  });
});
