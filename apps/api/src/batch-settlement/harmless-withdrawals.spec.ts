import { unjudgedWithdrawals } from './harmless-withdrawals';

describe('unjudgedWithdrawals', () => {
  const events = new Map([
    ['0xa', 100n],
    ['0xb', 100n],
  ]);
  const channel = (
    channelId: string,
    charged: bigint,
    harmless: { logReadUpTo: bigint; coversUpTo: bigint } | null,
  ) => ({
    channelId,
    charged,
    harmless,
  });

  it('names every unclaimed channel of the log that no read judged harmless', () => {
    expect(unjudgedWithdrawals(events, [channel('0xa', 10n, null), channel('0xb', 20n, null)])).toEqual(['0xa', '0xb']);
  });

  it('leaves out a channel judged harmless after its last event, charged within what the verdict covers', () => {
    const judged = { logReadUpTo: 100n, coversUpTo: 50n };
    expect(unjudgedWithdrawals(events, [channel('0xa', 50n, judged), channel('0xb', 20n, null)])).toEqual(['0xb']);
  });

  it('names it again for a later event, or a charge above what the verdict covers', () => {
    const judged = { logReadUpTo: 100n, coversUpTo: 50n };
    expect(unjudgedWithdrawals(new Map([['0xa', 101n]]), [channel('0xa', 10n, judged)])).toEqual(['0xa']);
    expect(unjudgedWithdrawals(events, [channel('0xa', 51n, judged)])).toEqual(['0xa']);
  });

  it('names only unclaimed channels', () => {
    expect(unjudgedWithdrawals(events, [channel('0xb', 20n, null)])).toEqual(['0xb']);
  });
});
