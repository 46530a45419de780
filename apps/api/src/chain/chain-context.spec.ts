import { confirmedBlock, hasConfirmations } from './chain-context';

describe('confirmedBlock', () => {
  it('is the newest block with that many confirmations, the head itself counting one; never below block 0', () => {
    expect(confirmedBlock(100n, 1)).toBe(100n);
    expect(confirmedBlock(100n, 2)).toBe(99n);
    expect(confirmedBlock(1n, 5)).toBe(0n);
  });
});

describe('hasConfirmations', () => {
  it('counts the block a transaction was mined in as its first confirmation', () => {
    expect(hasConfirmations(100n, 100n, 1)).toBe(true);
    expect(hasConfirmations(100n, 100n, 2)).toBe(false);
    expect(hasConfirmations(101n, 100n, 2)).toBe(true);
    // A head behind the receipt's block (a node that lags the one that answered the receipt).
    expect(hasConfirmations(99n, 100n, 1)).toBe(false);
  });
});
