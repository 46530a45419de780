import type { Hex } from 'viem';
import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { ChannelStore } from './channel.store';

/*
 * ChannelStore's claim bookkeeping on the run's database (PGlite, or PostgreSQL with DATABASE_URL):
 * a channel leaves the claimer's queue only on what the chain said about the charges it still has.
 */
const hex = (byte: string, bytes: number) => `0x${byte.repeat(bytes)}` as Hex;

describe('ChannelStore.markClaimed', () => {
  let test: TestDatabase;
  let store: ChannelStore;
  beforeAll(async () => {
    test = await createTestDatabase();
    store = new ChannelStore(test.database);
  });
  afterAll(() => test.dispose());

  /** A channel charged `charged` and not yet claimed, as a voucher leaves it. */
  async function chargedChannel(byte: string, charged: bigint): Promise<string> {
    const channelId = hex(byte, 32);
    const config = {
      payer: hex('01', 20),
      payerAuthorizer: hex('01', 20),
      receiver: hex('02', 20),
      receiverAuthorizer: hex('03', 20),
      token: hex('04', 20),
      withdrawDelay: 86_400,
      salt: hex('00', 32),
    };
    await store.open({ channelId, chainId: 31337, escrow: hex('05', 20), config }, 0n);
    await charge(channelId, charged);
    return channelId;
  }
  /** A voucher taken: what recordVoucher's move does to the channel. */
  const charge = (channelId: string, charged: bigint) =>
    test.database.sql.query(
      `UPDATE payment_channels SET charged = $2::bigint, unclaimed_since = COALESCE(unclaimed_since, now()) WHERE channel_id = $1`,
      [channelId, charged.toString()],
    );
  const unclaimedSince = async (channelId: string) =>
    (await test.database.prisma.paymentChannel.findUniqueOrThrow({ where: { channelId } })).unclaimedSince;

  it('keeps in the queue a channel charged more after the chain was read as holding nothing more to claim', async () => {
    // The claimer read 10,000 charged, and the chain: 10,000 held, all claimed. A deposit and a
    // voucher for 20,000 land before its update: the new voucher must still be claimed.
    const channelId = await chargedChannel('a1', 10_000n);
    await charge(channelId, 20_000n);
    await store.markClaimed(channelId, 10_000n, { balance: 10_000n, charged: 10_000n });
    expect(await unclaimedSince(channelId)).not.toBeNull();
  });

  it('takes out of the queue a channel charged above what it holds, while nothing more was charged since the read', async () => {
    const channelId = await chargedChannel('a2', 30_000n);
    await store.markClaimed(channelId, 20_000n, { balance: 20_000n, charged: 30_000n });
    expect(await unclaimedSince(channelId)).toBeNull();
  });

  it('takes out of the queue a channel whose charges are all claimed, and keeps one charged above the claims', async () => {
    const claimed = await chargedChannel('a3', 10_000n);
    await store.markClaimed(claimed, 10_000n);
    expect(await unclaimedSince(claimed)).toBeNull();
    const behind = await chargedChannel('a4', 20_000n);
    await store.markClaimed(behind, 10_000n);
    expect(await unclaimedSince(behind)).not.toBeNull();
  });
});
