import type { OnChainChannel } from '../chain/escrow';
import { RecentChannelStates } from './recent-channel-states';

const ID = `0x${'c'.repeat(64)}` as const;
const state = (balance: bigint): OnChainChannel => ({ balance, totalClaimed: 0n, withdrawal: null, refundNonce: 0n });

describe('recent channel states', () => {
  let clock = 0;
  const recent = () => new RecentChannelStates(1_000, () => clock);
  beforeEach(() => (clock = 10_000));

  it('hands a state out while its read started less than the window ago, counted from the read’s start', () => {
    const states = recent();
    const readAt = states.startOfRead();
    clock += 300; // the read took 300 ms
    states.remember(ID, state(5n), readAt);
    expect(states.get(ID)).toEqual(state(5n));
    expect(states.get(ID.toUpperCase().replace('0X', '0x') as `0x${string}`)).toEqual(state(5n));
    clock = readAt + 999;
    expect(states.get(ID)).toEqual(state(5n));
    clock = readAt + 1_000;
    expect(states.get(ID)).toBeUndefined();
  });

  it('keeps the read that started last when reads end out of order', () => {
    const states = recent();
    const older = states.startOfRead();
    clock += 10;
    const newer = states.startOfRead();
    states.remember(ID, state(7n), newer);
    states.remember(ID, state(5n), older);
    expect(states.get(ID)).toEqual(state(7n));
  });

  it('keeps nothing with a window of 0', () => {
    const states = new RecentChannelStates(0, () => clock);
    states.remember(ID, state(5n), clock);
    expect(states.get(ID)).toBeUndefined();
  });

  it('forgets the least recently read channel beyond its bound', () => {
    const states = recent();
    const id = (i: number) => `0x${i.toString(16).padStart(64, '0')}` as const;
    for (let i = 0; i <= 10_000; i++) states.remember(id(i), state(BigInt(i)), clock);
    expect(states.get(id(0))).toBeUndefined();
    expect(states.get(id(1))).toEqual(state(1n));
    expect(states.get(id(10_000))).toEqual(state(10_000n));
  });
});
