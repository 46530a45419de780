import type { UnclaimedOfReceiver } from './channel.store';
import { receiversToVisit } from './claimer.service';

describe('receiversToVisit', () => {
  const now = new Date('2026-12-07T12:00:00Z');
  const settings = { claimMinMicros: 1_000n, claimMaxAgeSeconds: 3_600, claimIntervalMs: 60_000 };
  const minutesAgo = (minutes: number) => new Date(now.getTime() - minutes * 60_000);
  const group = (receiver: string, over: Partial<UnclaimedOfReceiver> = {}): UnclaimedOfReceiver => ({
    receiver,
    token: '0xt',
    withdrawDelay: 86_400,
    since: minutesAgo(5),
    owed: 10n,
    published: false,
    withdrawing: false,
    ...over,
  });
  const visit = (unclaimed: UnclaimedOfReceiver[], unsettled: { receiver: string; since: Date }[] = [], all = false) =>
    receiversToVisit(
      unclaimed,
      unsettled.map((one) => ({ ...one, token: '0xt' })),
      { now, settings, readEveryQueue: all },
    ).map(({ receiver, withdrawing, late, overdue, readQueue }) => ({
      receiver,
      withdrawing,
      late,
      overdue,
      readQueue,
    }));

  it('leaves out a receiver the database shows not due: too little, none overdue, none withdrawing, nothing published', () => {
    expect(visit([group('0xsmall')])).toEqual([]);
  });

  it('visits those due by size (summed over their withdraw delays), age (each delay its own deadline) or a published claim: the overdue first, then longest-waiting first', async () => {
    expect(
      visit([
        group('0xsized', { owed: 600n, since: minutesAgo(10) }),
        group('0xsized', { owed: 400n, withdrawDelay: 7_200, since: minutesAgo(20) }),
        // A quarter of a 3,600 s delay is 15 minutes: overdue.
        group('0xaged', { withdrawDelay: 3_600, since: minutesAgo(16) }),
        group('0xpublished', { published: true, since: minutesAgo(25) }),
      ]),
    ).toEqual([
      { receiver: '0xaged', withdrawing: false, late: false, overdue: true, readQueue: true },
      { receiver: '0xpublished', withdrawing: false, late: false, overdue: false, readQueue: true },
      { receiver: '0xsized', withdrawing: false, late: false, overdue: false, readQueue: true },
    ]);
  });

  it('puts a receiver with a payer withdrawing first, its queue read only when due; one owed only a settle last', () => {
    expect(
      visit(
        [
          group('0xdue', { owed: 1_000n, since: minutesAgo(50) }),
          group('0xwithdrawing', { withdrawing: true, since: minutesAgo(1) }),
          group('0xsmall', { since: minutesAgo(40) }),
        ],
        [
          { receiver: '0xsmall', since: minutesAgo(600) },
          { receiver: '0xdue', since: minutesAgo(700) },
        ],
      ),
    ).toEqual([
      { receiver: '0xwithdrawing', withdrawing: true, late: false, overdue: false, readQueue: false },
      // Its older unsettled claim makes it wait longer, still among the due.
      { receiver: '0xdue', withdrawing: false, late: false, overdue: false, readQueue: true },
      { receiver: '0xsmall', withdrawing: false, late: false, overdue: false, readQueue: false },
    ]);
  });

  it('puts a receiver whose voucher is half its withdraw delay old (late) before the merely overdue, whatever their ages', () => {
    const order = receiversToVisit(
      [
        group('0xoverdue', { since: minutesAgo(600) }),
        // Half of a 3,600 s delay is 30 minutes.
        group('0xlate', { withdrawDelay: 3_600, since: minutesAgo(31) }),
      ],
      [],
      { now, settings, readEveryQueue: false },
    );
    expect(order.map(({ receiver, late, overdue }) => ({ receiver, late, overdue }))).toEqual([
      { receiver: '0xlate', late: true, overdue: true },
      { receiver: '0xoverdue', late: false, overdue: true },
    ]);
  });

  it('counts a group pushed behind the queue (dated in the future) neither overdue nor late', () => {
    expect(visit([group('0xpushed', { since: new Date(now.getTime() + 3_600_000) })])).toEqual([]);
  });

  it('reads every queue when asked to (a forced run, or the escrow log unread)', () => {
    expect(visit([group('0xsmall')], [], true)).toEqual([
      { receiver: '0xsmall', withdrawing: false, late: false, overdue: false, readQueue: true },
    ]);
  });
});
