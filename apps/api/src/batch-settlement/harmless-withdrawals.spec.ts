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

  it('leaves out a channel judged harmless after its last event, at the same charge', () => {
    const harmless = new HarmlessWithdrawals();
    harmless.record('0xa', { harmless: true, charged: 10n, logReadUpTo: 100n });
    expect(harmless.unjudged(events, unclaimed)).toEqual(['0xb']);
  });

  it('names it again for a later event, a new charge, or a read that found it harmful', () => {
    const harmless = new HarmlessWithdrawals();
    harmless.record('0xa', { harmless: true, charged: 10n, logReadUpTo: 100n });
    expect(harmless.unjudged(new Map([['0xa', 101n]]), unclaimed)).toEqual(['0xa']);
    expect(harmless.unjudged(events, [{ channelId: '0xa', charged: 11n }])).toEqual(['0xa']);
    harmless.record('0xa', { harmless: false, charged: 10n, logReadUpTo: 100n });
    expect(harmless.unjudged(events, unclaimed)).toEqual(['0xa', '0xb']);
  });

  it('judges nothing read before the log was ever read, and forgets channels no longer unclaimed', () => {
    const harmless = new HarmlessWithdrawals();
    harmless.record('0xa', { harmless: true, charged: 10n, logReadUpTo: undefined });
    expect(harmless.unjudged(events, unclaimed)).toEqual(['0xa', '0xb']);
    harmless.record('0xa', { harmless: true, charged: 10n, logReadUpTo: 100n });
    expect(harmless.unjudged(events, [unclaimed[1]])).toEqual(['0xb']);
    // Claimed up, then charged again at the very same total: judged afresh.
    expect(harmless.unjudged(events, unclaimed)).toEqual(['0xa', '0xb']);
  });
});
