import { randomBytes, randomUUID } from 'node:crypto';
import type { Hex } from 'viem';
import { besideHeldChange } from '../../test/held-change';
import { createTestDatabase, FAULT_TEST_POSTGRES_URL, type TestDatabase } from '../../test/test-database';
import { ChannelStore, DepositLeaseLost, DepositOnItsWay } from './channel.store';

/*
 * ChannelStore's claim bookkeeping on the run's database (PGlite, or PostgreSQL with DATABASE_URL):
 * a channel leaves the claimer's queue only on what the chain said about the charges it still has.
 */
const hex = (byte: string, bytes: number) => `0x${byte.repeat(bytes)}` as Hex;
const channelConfig = {
  payer: hex('01', 20),
  payerAuthorizer: hex('01', 20),
  receiver: hex('02', 20),
  receiverAuthorizer: hex('03', 20),
  token: hex('04', 20),
  withdrawDelay: 86_400,
  salt: hex('00', 32),
};

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
    await store.open({ channelId, chainId: 31337, escrow: hex('05', 20), config: channelConfig }, 0n);
    await charge(channelId, charged);
    return channelId;
  }
  /** A voucher taken: what recordVoucher's move does to the channel. */
  const charge = (channelId: string, charged: bigint) =>
    test.database.sql.query(
      `UPDATE payment_channels SET charged = $2::bigint, unclaimed_since = LEAST(unclaimed_since, now()) WHERE channel_id = $1`,
      [channelId, charged.toString()],
    );
  const unclaimedSince = async (channelId: string) =>
    (await test.database.prisma.paymentChannel.findUniqueOrThrow({ where: { channelId } })).unclaimedSince;

  it('keeps in the queue a channel charged more after the chain was read as holding nothing more to claim', async () => {
    // The claimer read 10,000 charged, and the chain: 10,000 held, all claimed. A deposit and a
    // voucher for 20,000 land before its update: the new voucher must still be claimed.
    const channelId = await chargedChannel('a1', 10_000n);
    await charge(channelId, 20_000n);
    await store.markClaimed(channelId, 10_000n, { balance: 10_000n, charged: 10_000n, readAgainAfterSeconds: 3600 });
    expect(await unclaimedSince(channelId)).not.toBeNull();
  });

  it("lists a channel seen withdrawing among its receiver's withdrawing ones, whatever the log window, until a read shows no withdrawal", async () => {
    const signer = { chainId: 31337, escrow: hex('05', 20), receiverAuthorizer: channelConfig.receiverAuthorizer };
    const among = async (ids: string[]) =>
      (await store.unclaimedAmong(signer, channelConfig.receiver, channelConfig.token, ids)).map((c) => c.channelId);
    const seen = await chargedChannel('b1', 10_000n);
    const read = await chargedChannel('b2', 10_000n);
    await chargedChannel('b3', 10_000n); // never withdrawing
    expect(await among([])).toEqual([]);
    await store.markWithdrawalsSeen([seen]); // a WithdrawInitiated event
    await store.markClaimed(read, 0n, {
      balance: 50_000n,
      charged: 10_000n,
      readAgainAfterSeconds: 3600,
      withdrawing: true,
    });
    expect((await among([])).sort()).toEqual([seen, read].sort()); // out of the window: still listed
    await store.markClaimed(seen, 0n, {
      balance: 50_000n,
      charged: 10_000n,
      readAgainAfterSeconds: 3600,
      withdrawing: false,
    });
    await store.markClaimed(read, 0n); // no read of its withdrawal: unchanged
    expect(await among([])).toEqual([read]);
    expect((await among([seen])).sort()).toEqual([seen, read].sort()); // in the window again
  });

  it('puts a channel charged above what it holds, while nothing more was charged since the read, behind the queue: read again later', async () => {
    const channelId = await chargedChannel('a2', 30_000n);
    const before = Date.now();
    await store.markClaimed(channelId, 20_000n, { balance: 20_000n, charged: 30_000n, readAgainAfterSeconds: 3600 });
    const since = await unclaimedSince(channelId);
    expect(since).not.toBeNull();
    expect(since!.getTime()).toBeGreaterThan(before + 3_500_000);
    // Charged since the read (a voucher on a deposit the read did not see): it keeps its place.
    const charged = await chargedChannel('a5', 30_000n);
    const place = await unclaimedSince(charged);
    await store.markClaimed(charged, 20_000n, { balance: 20_000n, charged: 25_000n, readAgainAfterSeconds: 3600 });
    expect(await unclaimedSince(charged)).toEqual(place);
  });

  it("keeps a harmless withdrawal's verdict on the channel, as unclaimedChannels lists it, until taken back", async () => {
    const channelId = await chargedChannel('a9', 10_000n);
    const signer = { chainId: 31337, escrow: hex('05', 20), receiverAuthorizer: channelConfig.receiverAuthorizer };
    const verdictOf = async () =>
      (await store.unclaimedChannels(signer)).find((channel) => channel.channelId === channelId)?.harmless;
    expect(await verdictOf()).toBeNull();
    await store.recordWithdrawalVerdict(channelId, { logReadUpTo: 120n, coversUpTo: 90_000n });
    expect(await verdictOf()).toEqual({ logReadUpTo: 120n, coversUpTo: 90_000n });
    await store.recordWithdrawalVerdict(channelId, null);
    expect(await verdictOf()).toBeNull();
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

/*
 * On PostgreSQL (on either run: a change held open needs a second connection): a voucher's record
 * holds its site's terms until it commits, so a change of them waits for it, and a record reaching
 * a change held open waits for it and is then judged by what it left.
 */
describe('ChannelStore.recordVoucher beside a change of its site held open', () => {
  let test: TestDatabase;
  let store: ChannelStore;
  let publisherSide: TestDatabase['database'];
  beforeAll(async () => {
    test = await createTestDatabase({ postgresUrl: FAULT_TEST_POSTGRES_URL });
    store = new ChannelStore(test.database);
    publisherSide = await test.connectAnother();
  });
  afterAll(() => test.dispose());

  /** A site taking vouchers, and the record of a voucher for one of its pages on a fresh channel, judged by `terms`. */
  async function vouchersOnNewSite() {
    const publisher = await test.database.prisma.publisher.create({
      data: { email: `${randomUUID()}@example.com`, passwordHash: 'x', apiKeyHash: randomUUID() },
    });
    const site = await test.database.prisma.site.create({
      data: {
        publisherId: publisher.id,
        domain: `${randomUUID()}.example.com`,
        siteTokenHash: randomUUID(),
        batchSettlement: true,
      },
    });
    const asJudged = {
      pricingVersion: site.pricingVersion,
      payoutAddress: publisher.payoutAddress,
      secretsVersion: site.secretsVersion,
    };
    const record = async (terms = asJudged) => {
      const channelId = `0x${randomBytes(32).toString('hex')}` as Hex;
      await store.open({ channelId, chainId: 31337, escrow: hex('05', 20), config: channelConfig }, 0n);
      const now = new Date();
      return store.recordVoucher({
        channelId,
        expected: 0n,
        cumulative: 1_000n,
        signature: hex('5a', 65),
        refundNonce: 0n,
        terms,
        payment: {
          gateId: randomUUID(),
          gateIdSha256: 'e'.repeat(64),
          siteId: site.id,
          publisherId: publisher.id,
          url: '/a',
          payer: channelConfig.payer,
          amount: 1_000n,
          tokenKid: 'kid',
          tokenIssuedAt: now,
          tokenExpiresAt: new Date(now.getTime() + 60_000),
          chainId: 31337,
          asset: channelConfig.token,
          payTo: channelConfig.receiver,
          confirmedAt: now,
        },
      });
    };
    return { site, record };
  }

  it('waits for a change that turns vouchers off, or rotates the secrets, and then records nothing; one of another column waits and records', async () => {
    const { site, record } = await vouchersOnNewSite();
    const beside = (change: string, siteId: string) => besideHeldChange(publisherSide, change, [siteId], record);
    const off = await beside('UPDATE sites SET batch_settlement = false WHERE id = $1::uuid', site.id);
    expect(off).toEqual({ waited: true, outcome: { status: 'fulfilled', value: 'terms-changed' } });
    await test.database.sql.query('UPDATE sites SET batch_settlement = true WHERE id = $1::uuid', [site.id]);
    // A rotation of its secrets (the token was signed under the version judged): nothing recorded.
    const rotated = await beside('UPDATE sites SET secrets_version = secrets_version + 1 WHERE id = $1::uuid', site.id);
    expect(rotated).toEqual({ waited: true, outcome: { status: 'fulfilled', value: 'terms-changed' } });
    await test.database.sql.query('UPDATE sites SET secrets_version = secrets_version - 1 WHERE id = $1::uuid', [
      site.id,
    ]);
    const renamed = await beside("UPDATE sites SET domain = 'renamed-' || domain WHERE id = $1::uuid", site.id);
    expect(renamed).toEqual({ waited: true, outcome: { status: 'fulfilled', value: 'recorded' } });
    const other = await vouchersOnNewSite();
    const unrelated = await beside('UPDATE sites SET domain = domain WHERE id = $1::uuid', other.site.id);
    expect(unrelated).toEqual({ waited: false, outcome: { status: 'fulfilled', value: 'recorded' } });
  });
});

describe('ChannelStore: a re-priced claim or settle written down again', () => {
  let test: TestDatabase;
  let store: ChannelStore;
  beforeAll(async () => {
    test = await createTestDatabase();
    store = new ChannelStore(test.database);
  });
  afterAll(() => test.dispose());

  const of = { chainId: 31337, receiver: hex('02', 20), token: hex('04', 20) };
  const rowsAtNonce = async (nonce: number) => ({
    claims: await test.database.prisma.channelClaim.count({ where: { ...of, nonce } }),
    settles: await test.database.prisma.channelSettle.count({ where: { ...of, nonce } }),
  });

  // Signing is deterministic: a replacement whose broadcast was refused is signed identical at the next run.
  it('takes the same claim replacement twice (its broadcast refused the first time), once written', async () => {
    const stuck = hex('c1', 32);
    const replacement = hex('c2', 32);
    await test.database.prisma.channelClaim.create({
      data: { ...of, txHash: stuck, channels: 1, amount: 1_000n, nonce: 41 },
    });
    await store.recordClaimReplacement(of.chainId, stuck, replacement);
    await expect(store.recordClaimReplacement(of.chainId, stuck, replacement)).resolves.toBeUndefined();
    expect((await rowsAtNonce(41)).claims).toBe(2);
  });

  it('takes the same settle replacement twice, once written', async () => {
    const stuck = hex('d1', 32);
    const replacement = hex('d2', 32);
    await test.database.prisma.channelSettle.create({ data: { ...of, txHash: stuck, nonce: 42, claimIds: [] } });
    await store.recordSettleReplacement(of.chainId, stuck, replacement);
    await expect(store.recordSettleReplacement(of.chainId, stuck, replacement)).resolves.toBeUndefined();
    expect((await rowsAtNonce(42)).settles).toBe(2);
  });

  it('replaces nothing no longer on its way, nor with a hash written down at another nonce', async () => {
    const landed = hex('e1', 32);
    await test.database.prisma.channelClaim.create({
      data: { ...of, txHash: landed, channels: 1, amount: 1_000n, nonce: 43, landedAt: new Date() },
    });
    await expect(store.recordClaimReplacement(of.chainId, landed, hex('e2', 32))).rejects.toThrow(
      /no longer on its way/,
    );
    const stuck = hex('e3', 32);
    const elsewhere = hex('e4', 32);
    await test.database.prisma.channelClaim.create({
      data: { ...of, txHash: stuck, channels: 1, amount: 1_000n, nonce: 44 },
    });
    await test.database.prisma.channelClaim.create({
      data: { ...of, txHash: elsewhere, channels: 1, amount: 1_000n, nonce: 45 },
    });
    await expect(store.recordClaimReplacement(of.chainId, stuck, elsewhere)).rejects.toThrow(/no longer on its way/);
  });
});

describe('ChannelStore: relayer transactions on their way', () => {
  let test: TestDatabase;
  let store: ChannelStore;
  beforeAll(async () => {
    test = await createTestDatabase();
    store = new ChannelStore(test.database);
  });
  afterAll(() => test.dispose());

  it("lists a refund once per hash sent for it, each naming the hold's current hash (an earlier one may be the one pending)", async () => {
    const channelId = hex('f1', 32);
    await store.open({ channelId, chainId: 31337, escrow: hex('05', 20), config: channelConfig }, 0n);
    await test.database.sql.query(`UPDATE payment_channels SET charged = 10000 WHERE channel_id = $1`, [channelId]);
    const id = randomUUID();
    expect(await store.holdForRefund({ channelId, id, charged: 10_000n, nonce: 0n, amount: 1n })).toBe(true);
    const [first, current] = [hex('f2', 32), hex('f3', 32)];
    expect(await store.setRefundTx(channelId, id, null, first, 50)).toBe(true);
    expect(await store.recordRefundReplacement(channelId, id, first, current, 50)).toBe(true);

    const listed = (await store.relayerTransactionsOnTheirWay(31337)).filter((one) => one.kind === 'refund');
    expect(listed.map((one) => [one.txHash, one.nonce, one.refund])).toEqual(
      expect.arrayContaining([
        [current, 50, { channelId, id, current }],
        [first, 50, { channelId, id, current }],
      ]),
    );
    expect(listed).toHaveLength(2);
  });

  it('writes a deposit down only while its lease is the payer’s and still counts it, and no copy is on its way at another relayer nonce', async () => {
    const deposit = depositOf({ byte: 'c', payer: hex('02', 20), nonce: 70 });
    const lease = leaseOf(deposit);
    const written = () => test.database.prisma.channelDeposit.count({ where: { payer: deposit.payer } });
    await store.takeDepositLease(lease, 120);
    await expect(store.recordDepositSent(deposit, randomUUID())).rejects.toThrow(DepositLeaseLost); // another's lease
    // Stalled past the time its lease may be written down within (9 minutes, a minute short of the 10 exact claims count it).
    await test.database.sql.query(
      `UPDATE deposit_leases SET taken_at = now() - interval '9 minutes 30 seconds' WHERE payer = $1`,
      [deposit.payer],
    );
    await expect(store.recordDepositSent(deposit, lease.id)).rejects.toThrow(DepositLeaseLost);
    expect(await written()).toBe(0);
    await test.database.sql.query(
      `UPDATE deposit_leases SET taken_at = now() - interval '8 minutes' WHERE payer = $1`,
      [deposit.payer],
    );
    await store.recordDepositSent(deposit, lease.id);
    expect(await written()).toBe(1);
    // The same authorization again: at another relayer nonce while this one is on its way, never
    // (both could be mined); at the same nonce, yes (only one of the two can be).
    await expect(store.recordDepositSent({ ...deposit, txHash: hex('c9', 32), nonce: 71 }, lease.id)).rejects.toThrow(
      DepositOnItsWay,
    );
    await store.recordDepositSent({ ...deposit, txHash: hex('c9', 32) }, lease.id);
    expect(await written()).toBe(2);
    await store.recordDepositLanded(deposit.chainId, deposit.txHash); // off the list of those on their way
  });

  it('lists a deposit written down until it lands; a copy at its nonce is the same deposit, one elsewhere is not', async () => {
    const deposit = depositOf({ byte: 'a', payer: hex('01', 20), nonce: 60 });
    const lease = leaseOf(deposit);
    expect(await store.takeDepositLease(lease, 120)).toEqual([]);
    await store.recordDepositSent(deposit, lease.id);
    await store.recordDepositSent(deposit, lease.id); // signed again identical: one row
    const copy = hex('a9', 32);
    await store.recordDepositReplacement(deposit.chainId, deposit.txHash, copy);
    const deposits = async () =>
      (await store.relayerTransactionsOnTheirWay(31337))
        .filter((one) => one.kind === 'deposit')
        .map((one) => one.txHash);
    expect((await deposits()).sort()).toEqual([deposit.txHash, copy]);
    expect(await store.isDepositAt(deposit.chainId, deposit, copy)).toBe(true);
    expect(await store.isDepositAt(deposit.chainId, { ...deposit, nonce: 61 }, copy)).toBe(false);
    expect(await store.isDepositAt(deposit.chainId, { ...deposit, channelId: hex('b7', 32) }, copy)).toBe(false);

    await store.recordDepositLanded(deposit.chainId, copy);
    expect(await deposits()).toEqual([]);
    // The original, never mined now, is dropped; the copy that landed still answers for the deposit.
    expect(await test.database.prisma.channelDeposit.count({ where: { nonce: 60 } })).toBe(1);
    expect(await store.isDepositAt(deposit.chainId, deposit, copy)).toBe(true);
    await expect(store.recordDepositReplacement(deposit.chainId, copy, hex('aa', 32))).rejects.toThrow(
      /no longer on its way/,
    );
  });
});

/** A deposit the relayer sent at relayer nonce `nonce` for `payer`: its channel, authorization and hash spelled from `byte`. */
function depositOf({ byte, payer, nonce }: { byte: string; payer: Hex; nonce: number }) {
  return {
    chainId: 31337,
    channelId: hex(`${byte}7`, 32),
    payer,
    authorizationNonce: hex(`${byte}${byte}`, 32),
    txHash: hex(`${byte}8`, 32),
    nonce,
    amount: 600_000n,
    validBefore: new Date('2030-01-01T00:00:00Z'),
  };
}

/** The payer's deposit lease for `deposit`, before its broadcast. */
function leaseOf(deposit: ReturnType<typeof depositOf>) {
  return { ...deposit, asset: hex('ab', 20), id: randomUUID(), nonce: deposit.authorizationNonce };
}
