import { currentFees, isUnderpriced, minimumReplacementFee, pendingTooLong, replacementFees } from './fee-bump';

const gwei = (n: number) => BigInt(Math.round(n * 1e9));

describe('re-pricing a stuck relayer transaction', () => {
  const offered = { maxFeePerGas: gwei(2), maxPriorityFeePerGas: gwei(1) };

  it('raises both fees by at least 12.5 %, rounded up (the replacement nodes take)', () => {
    expect(minimumReplacementFee(8n)).toBe(9n);
    expect(minimumReplacementFee(9n)).toBe(11n); // 10.125, up
    expect(minimumReplacementFee(0n)).toBe(0n);
    // The chain asks a little more than offered: the 12.5 % minimum, not the chain's ask, is what is offered.
    const market = { maxFeePerGas: gwei(2.1), maxPriorityFeePerGas: gwei(1) };
    expect(replacementFees(offered, market, gwei(100))).toEqual({
      maxFeePerGas: gwei(2.25),
      maxPriorityFeePerGas: gwei(1.125),
    });
  });

  it('offers what the chain asks when that is more', () => {
    const market = { maxFeePerGas: gwei(30), maxPriorityFeePerGas: gwei(3) };
    expect(replacementFees(offered, market, gwei(100))).toEqual(market);
  });

  it('never offers more than the maximum fee; none at all when the 12.5 % minimum is above it', () => {
    const market = { maxFeePerGas: gwei(30), maxPriorityFeePerGas: gwei(3) };
    // Capped between the minimum and the chain's ask: the most allowed, which nodes still take.
    expect(replacementFees(offered, market, gwei(5))).toEqual({ maxFeePerGas: gwei(5), maxPriorityFeePerGas: gwei(3) });
    expect(replacementFees(offered, market, gwei(2.25))).toEqual({
      maxFeePerGas: gwei(2.25),
      maxPriorityFeePerGas: gwei(2.25),
    });
    // Nothing under it: the transaction waits for the fees to fall rather than burn more.
    expect(replacementFees(offered, market, gwei(2.2))).toBeNull();
  });

  it('is needed only when the next block would take less tip from it than miners ask, or not take it at all', () => {
    const chain = { baseFeePerGas: gwei(0.5), maxPriorityFeePerGas: gwei(1) };
    expect(isUnderpriced(offered, chain)).toBe(false);
    // Its cap leaves less than the tip over a higher base fee; none at all over one above the cap.
    expect(isUnderpriced(offered, { ...chain, baseFeePerGas: gwei(1.5) })).toBe(true);
    expect(isUnderpriced(offered, { ...chain, baseFeePerGas: gwei(3) })).toBe(true);
    // Miners ask a higher tip than its own.
    expect(isUnderpriced(offered, { ...chain, maxPriorityFeePerGas: gwei(1.01) })).toBe(true);
    expect(isUnderpriced(offered, { baseFeePerGas: gwei(0.1), maxPriorityFeePerGas: gwei(0.5) })).toBe(false);
  });

  it('prices the chain as a new transaction would be: a fifth over the base fee, plus the tip', () => {
    expect(currentFees({ baseFeePerGas: gwei(10), maxPriorityFeePerGas: gwei(1) })).toEqual({
      maxFeePerGas: gwei(13),
      maxPriorityFeePerGas: gwei(1),
    });
  });

  it('waits the configured time from the broadcast first', () => {
    const chain = { feeBump: { afterSeconds: 30, maxFeePerGas: gwei(10) } };
    const sentAt = new Date(1_000_000);
    expect(pendingTooLong(chain, sentAt, 1_000_000 + 29_999)).toBe(false);
    expect(pendingTooLong(chain, sentAt, 1_000_000 + 30_000)).toBe(true);
  });
});
