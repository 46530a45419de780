import { confirmedBlock } from './chain-context';

describe('confirmedBlock', () => {
  it('is the newest block with that many confirmations, the head itself counting one; never below block 0', () => {
    expect(confirmedBlock(100n, 1)).toBe(100n);
    expect(confirmedBlock(100n, 2)).toBe(99n);
    expect(confirmedBlock(1n, 5)).toBe(0n);
  });
});
