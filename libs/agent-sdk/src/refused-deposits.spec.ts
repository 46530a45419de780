import type { Channel } from './channels';
import { refusedDeposits, REUSE_MARGIN_SECONDS, type SentDeposit } from './refused-deposits';

const channel = (name: string) => ({ channelId: name }) as unknown as Channel;
const deposit = (amount: bigint, validForSeconds: number): SentDeposit =>
  ({
    amount,
    validBefore: BigInt(Math.floor(Date.now() / 1000) + validForSeconds),
    reservation: { id: `${amount}` },
    payload: {},
  }) as unknown as SentDeposit;

describe('refusedDeposits', () => {
  beforeEach(() => jest.useFakeTimers({ now: new Date('2026-11-28T12:00:00Z') }));
  afterEach(() => jest.useRealTimers());

  const setUp = () => {
    const released: [Channel, SentDeposit][] = [];
    return { released, refused: refusedDeposits((c, d) => released.push([c, d])) };
  };

  it('hands a kept deposit back once, for its own channel, while it covers the next deposit and has time left', () => {
    const { released, refused } = setUp();
    const [a, b] = [channel('a'), channel('b')];
    const kept = deposit(100n, 300);
    refused.keep(a, kept);
    expect(refused.has(a)).toBe(true);
    expect(refused.take(b, 1n)).toBeUndefined();
    expect(refused.take(a, 100n)).toBe(kept);
    expect(refused.has(a)).toBe(false);
    expect(refused.take(a, 1n)).toBeUndefined();
    expect(released).toEqual([]);
  });

  it('releases a kept deposit too small for the next one, or too close to its end to be resent', () => {
    const { released, refused } = setUp();
    const a = channel('a');
    const small = deposit(100n, 300);
    refused.keep(a, small);
    expect(refused.take(a, 101n)).toBeUndefined();
    const late = deposit(100n, REUSE_MARGIN_SECONDS);
    refused.keep(a, late);
    expect(refused.take(a, 1n)).toBeUndefined();
    expect(released).toEqual([
      [a, small],
      [a, late],
    ]);
  });

  it('releases a deposit no page asked for again once it is no longer worth resending, and an earlier one kept over', () => {
    const { released, refused } = setUp();
    const a = channel('a');
    const first = deposit(100n, 300);
    const second = deposit(200n, 300);
    refused.keep(a, first);
    refused.keep(a, second);
    expect(released).toEqual([[a, first]]);
    jest.advanceTimersByTime((300 - REUSE_MARGIN_SECONDS - 1) * 1000);
    expect(refused.has(a)).toBe(true);
    jest.advanceTimersByTime(1000);
    expect(released).toEqual([
      [a, first],
      [a, second],
    ]);
    // Released, not expired: the site can still make it, so the channel still holds it.
    expect(refused.has(a)).toBe(true);
    jest.advanceTimersByTime(REUSE_MARGIN_SECONDS * 1000);
    expect(refused.has(a)).toBe(false);
    // Kept again (the same authorization, resent and refused): one release each time it is let go.
    refused.keep(a, second);
    refused.keep(a, second);
    expect(released).toHaveLength(2);
  });
});
