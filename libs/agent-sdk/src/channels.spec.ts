import type { Hex } from '@crawlgate/core';
import { lowerDeposited, type Channel } from './channels';

/** The amounts of a channel; the rest is never read here. */
const channel = (deposited: bigint, charged: bigint) =>
  ({ deposited, charged, signed: charged, unanswered: [], channelId: '0x01' as Hex }) as unknown as Channel;

describe('lowerDeposited', () => {
  it('lowers the deposits to what is left', () => {
    const lowered = channel(50_000n, 20_000n);
    lowerDeposited(lowered, 30_000n);
    expect(lowered.deposited).toBe(30_000n);
  });

  it('never below what the site charged: a deposit never made, answered against by a hostile site, left a file no start could read', () => {
    const lowered = channel(50_000n, 20_000n);
    lowerDeposited(lowered, 0n);
    expect(lowered.deposited).toBe(20_000n);
    lowerDeposited(lowered, -5n);
    expect(lowered.deposited).toBe(20_000n);
  });
});
