import { HarmlessWithdrawals } from './harmless-withdrawals';

describe('HarmlessWithdrawals', () => {
  const unclaimed = [
    { channelId: '0xa', charged: 10n },
    { channelId: '0xb', charged: 20n },
  ];
  const events = new Map([
    ['0xa', 100n],
    ['0xb', 100n],
  ]);

  it('names every channel of the log until a read judges it harmless', () => {
    expect(new HarmlessWithdrawals().unjudged(events, unclaimed)).toEqual(['0xa', '0xb']);
  });

  it('leaves out a channel judged harmless after its last event, charged within what the verdict covers', () => {
    const harmless = new HarmlessWithdrawals();
    harmless.record('0xa', { logReadUpTo: 100n, coversUpTo: 50n });
    expect(harmless.unjudged(events, unclaimed)).toEqual(['0xb']);
    expect(harmless.unjudged(events, [{ channelId: '0xa', charged: 50n }])).toEqual([]);
  });

  it('names it again for a later event, a charge above what the verdict covers, or a read that found it harmful', () => {
    const harmless = new HarmlessWithdrawals();
    harmless.record('0xa', { logReadUpTo: 100n, coversUpTo: 50n });
    expect(harmless.unjudged(new Map([['0xa', 101n]]), unclaimed)).toEqual(['0xa']);
    expect(harmless.unjudged(events, [{ channelId: '0xa', charged: 51n }])).toEqual(['0xa']);
    harmless.record('0xa', undefined);
    expect(harmless.unjudged(events, unclaimed)).toEqual(['0xa', '0xb']);
  });

  it('forgets channels no longer unclaimed, and names only unclaimed ones', () => {
    const harmless = new HarmlessWithdrawals();
    harmless.record('0xa', { logReadUpTo: 100n, coversUpTo: 50n });
    expect(harmless.unjudged(events, [unclaimed[1]])).toEqual(['0xb']);
    // Claimed up, then charged again: judged afresh.
    expect(harmless.unjudged(events, unclaimed)).toEqual(['0xa', '0xb']);
  });
});
