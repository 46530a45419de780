import { RELAYER_LOW_SETTLEMENTS, SETTLEMENT_GAS, settlementsLeft } from './chain-health';

describe('settlementsLeft', () => {
  it('counts whole settlements of SETTLEMENT_GAS at the gas price', () => {
    const gwei = 10n ** 9n;
    expect(settlementsLeft(SETTLEMENT_GAS * gwei * 1_500n, gwei)).toBe(1_500n);
    expect(settlementsLeft(SETTLEMENT_GAS * gwei * 1_500n - 1n, gwei)).toBe(1_499n);
    expect(settlementsLeft(0n, gwei)).toBe(0n);
    expect(settlementsLeft(SETTLEMENT_GAS * RELAYER_LOW_SETTLEMENTS, 1n) < RELAYER_LOW_SETTLEMENTS).toBe(false);
  });

  it('reads a zero gas price as one wei, not as a division by zero', () => {
    expect(settlementsLeft(SETTLEMENT_GAS * 7n, 0n)).toBe(7n);
  });
});
