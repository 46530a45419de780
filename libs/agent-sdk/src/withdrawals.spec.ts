import type { Hex } from '@crawlgate/core';
import { ChannelBook, newChannel } from './channels';
import type { Offer } from './offers';
import type { Payer } from './payer';
import { initiateWithdrawals } from './withdrawals';

const PAYER = '0x00000000000000000000000000000000000000aa' as Hex;
const ESCROW = '0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003' as Hex;

/** A channel of `origin` on chain 8453, opened as the agent opens one. */
function channelOf(origin: string) {
  const offer = {
    chainId: 8453,
    asset: '0x00000000000000000000000000000000000000bb',
    payTo: '0x00000000000000000000000000000000000000cc',
    batch: { escrow: ESCROW, receiverAuthorizer: '0x00000000000000000000000000000000000000dd', withdrawDelay: 900 },
  } as unknown as Offer;
  return { ...newChannel(origin, offer, PAYER), deposited: 50_000n, signed: 20_000n, charged: 20_000n };
}

/** A payer whose chain holds 50,000 in every channel, none claimed nor withdrawing; it records what it sends. */
function recordingPayer() {
  const withdrawn: Hex[] = [];
  const reader = {
    getChainId: async () => 8453,
    readContract: async ({ functionName }: { functionName: string }) =>
      functionName === 'channels' ? [50_000n, 0n] : [0n, 0],
    waitForTransactionReceipt: async () => ({ status: 'success', logs: [] }),
  };
  const wallet = {
    account: { address: PAYER },
    writeContract: async ({ args }: { args: [{ salt: Hex }, bigint] }) => {
      withdrawn.push(args[0].salt);
      return `0x${'12'.repeat(32)}` as Hex;
    },
  };
  const payer = { chain: () => ({ wallet, public: reader }), inTurn: (send: () => Promise<unknown>) => send() };
  return { payer: payer as unknown as Payer, withdrawn };
}

describe('initiateWithdrawals', () => {
  it('starts every channel’s withdrawal while one site holds its voucher’s answer: one stalled site holds up no other', async () => {
    // Each in turn, a voucher whose answer never came (up to Node's 300 s a send, resent seven times)
    // held every channel after it from being withdrawn.
    const book = new ChannelBook();
    const stalled = channelOf('https://stalled.example');
    const honest = channelOf('https://honest.example');
    for (const channel of [stalled, honest]) book.set(ChannelBook.keyOf(channel), channel);
    let answer!: () => void;
    void book.exclusive(ChannelBook.keyOf(stalled), () => new Promise<void>((resolve) => (answer = resolve)));
    const { payer, withdrawn } = recordingPayer();
    const steps = initiateWithdrawals(payer, book);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(withdrawn).toEqual([honest.config.salt]);
    expect(honest.withdrawing).toBe(true);
    answer();
    expect((await steps).map((step) => [step.channelId, step.amount])).toEqual([
      [stalled.channelId, '30000'],
      [honest.channelId, '30000'],
    ]);
  });
});
