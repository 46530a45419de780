import { randomUUID } from 'node:crypto';
import { besideHeldChange } from '../../test/held-change';
import { createTestDatabase, FAULT_TEST_POSTGRES_URL, type TestDatabase } from '../../test/test-database';
import type { Payment } from '../generated/prisma/client';
import { PaymentStore, PaymentTermsChanged } from './payment.store';

/*
 * PaymentStore's reads and writes on the run's database (PGlite, or PostgreSQL with DATABASE_URL):
 * the rows it reads are the ones Prisma reads, field for field, and a payment is confirmed once.
 */
// Real lengths: hashes, nonces and addresses are fixed-width columns.
const hex = (byte: string, bytes: number) => `0x${byte.repeat(bytes)}`;
const ASSET = hex('aa', 20);
const PAYER = hex('bb', 20);
const TX = hex('cc', 32);

/** A publisher's site and a claim of an authorization of `payer` for it, judged by `terms` (default: the site's). */
async function claimsOnNewSite(database: TestDatabase['database'], store: PaymentStore) {
  const publisher = await database.prisma.publisher.create({
    data: { email: `store-${randomUUID()}@example.com`, passwordHash: 'x', apiKeyHash: randomUUID() },
  });
  const site = await database.prisma.site.create({
    data: { publisherId: publisher.id, domain: `${randomUUID()}.example.com`, siteTokenHash: randomUUID() },
  });
  const asJudged = { pricingVersion: site.pricingVersion, payoutAddress: publisher.payoutAddress };
  const claim = (nonce: string, payer = PAYER, terms = asJudged) =>
    store.claimInPayerTurn(
      {
        gateId: randomUUID(),
        siteId: site.id,
        publisherId: site.publisherId,
        url: '/a',
        chainId: 31337,
        asset: ASSET,
        payer,
        payTo: hex('dd', 20),
        amount: 1_000n,
        status: 'submitting',
        nonce,
        authorization: { from: PAYER, value: '1000' },
        paymentIdentifier: null,
        paymentFingerprint: null,
      },
      terms,
    );
  return { site, asJudged, claim };
}

describe('PaymentStore', () => {
  let test: TestDatabase;
  let store: PaymentStore;
  let onSite: Awaited<ReturnType<typeof claimsOnNewSite>>;
  beforeAll(async () => {
    test = await createTestDatabase();
    store = new PaymentStore(test.database);
    onSite = await claimsOnNewSite(test.database, store);
  });
  afterAll(() => test.dispose());

  const claim = (nonce: string, payer = PAYER) => onSite.claim(nonce, payer);
  const viaPrisma = (id: string) => test.database.prisma.payment.findUnique({ where: { id } });

  it('reads a payment by gate, id and nonce as Prisma does, through submitting, submitted and confirmed', async () => {
    const { payment } = await claim(hex('01', 32));
    expect(await store.byId(payment.id)).toEqual(await viaPrisma(payment.id));
    expect(await store.takeForBroadcast(payment.id, null, TX)).toBe(true);
    expect(await store.byId(payment.id)).toEqual(await viaPrisma(payment.id));
    await store.markSubmitted(payment.id, TX);
    const submitted = await viaPrisma(payment.id);
    expect(submitted).toMatchObject({ status: 'submitted', txHash: TX });
    expect(await store.byGate(payment.gateId)).toEqual(submitted);
    const issuedAt = new Date('2026-11-26T10:00:00.000Z');
    expect(
      await store.confirm(
        payment.id,
        {
          txHash: TX,
          transferLogIndex: 1,
          blockNumber: 12n,
          confirmedAt: issuedAt,
          tokenKid: 'kid',
          tokenIssuedAt: issuedAt,
          tokenExpiresAt: new Date(issuedAt.getTime() + 600_000),
        },
        null,
      ),
    ).toBe('confirmed');
    const confirmed = await viaPrisma(payment.id);
    expect(confirmed).toMatchObject({ status: 'confirmed', blockNumber: 12n, tokenKid: 'kid', confirmedAt: issuedAt });
    expect(await store.byNonce({ chainId: 31337, asset: ASSET, payer: PAYER, nonce: hex('01', 32) })).toEqual(
      confirmed,
    );
  });

  it("confirms a payment only under the site's secrets' version its token was signed with: after a rotation, nothing is written", async () => {
    const { payment } = await claim(hex('0f', 32));
    const { secretsVersion } = await test.database.prisma.site.findUniqueOrThrow({ where: { id: onSite.site.id } });
    const at = new Date();
    const receipt = { txHash: hex('e1', 32), transferLogIndex: 1, blockNumber: 2n, confirmedAt: at, tokenKid: 'k' };
    const signed = { ...receipt, tokenIssuedAt: at, tokenExpiresAt: at };
    expect(await store.confirm(payment.id, signed, secretsVersion + 1)).toBe('secrets-changed');
    expect(await viaPrisma(payment.id)).toMatchObject({ status: 'submitting', tokenKid: null });
    expect(await store.confirm(payment.id, signed, secretsVersion)).toBe('confirmed');
    expect(await viaPrisma(payment.id)).toMatchObject({ status: 'confirmed', tokenKid: 'k' });
  });

  it("answers 'not-confirmed', not 'secrets-changed', for a payment confirmed already or gone, whatever version it is given", async () => {
    const { payment } = await claim(hex('1f', 32));
    const { secretsVersion } = await test.database.prisma.site.findUniqueOrThrow({ where: { id: onSite.site.id } });
    const at = new Date();
    const signed = {
      txHash: hex('e2', 32),
      transferLogIndex: 1,
      blockNumber: 2n,
      confirmedAt: at,
      tokenKid: 'k',
      tokenIssuedAt: at,
      tokenExpiresAt: at,
    };
    expect(await store.confirm(payment.id, signed, secretsVersion)).toBe('confirmed');
    // Another finalizer, its token signed before a rotation: nothing for it to sign again.
    expect(await store.confirm(payment.id, { ...signed, tokenKid: 'late' }, secretsVersion - 1)).toBe('not-confirmed');
    expect(await store.confirm(randomUUID(), signed, secretsVersion)).toBe('not-confirmed');
    expect((await viaPrisma(payment.id))?.tokenKid).toBe('k');
  });

  it('confirms a payment once: a second finalizer changes nothing and is told so', async () => {
    const { payment } = await claim(hex('02', 32));
    const first = {
      txHash: hex('ee', 32),
      transferLogIndex: 1,
      blockNumber: 1n,
      confirmedAt: new Date(),
      tokenKid: 'first',
      tokenIssuedAt: null,
      tokenExpiresAt: null,
    };
    expect(await store.confirm(payment.id, first, null)).toBe('confirmed');
    expect(await store.confirm(payment.id, { ...first, tokenKid: 'second' }, null)).toBe('not-confirmed');
    expect((await viaPrisma(payment.id))?.tokenKid).toBe('first');
  });

  it('never marks submitted a payment the reconciler sent or confirmed meanwhile', async () => {
    const { payment } = await claim(hex('03', 32));
    const theirs = hex('ab', 32);
    expect(await store.markResubmitted(payment.id, null, theirs)).toBe(true);
    expect(await store.takeForBroadcast(payment.id, null, hex('ac', 32))).toBe(false);
    await store.markSubmitted(payment.id, hex('ac', 32));
    expect(await viaPrisma(payment.id)).toMatchObject({ status: 'submitted', txHash: theirs });
    const at = new Date();
    const receipt = {
      txHash: theirs,
      transferLogIndex: 1,
      blockNumber: 3n,
      confirmedAt: at,
      tokenKid: 'k',
      tokenIssuedAt: at,
      tokenExpiresAt: at,
    };
    expect(await store.confirm(payment.id, receipt, null)).toBe('confirmed');
    await store.markSubmitted(payment.id, hex('ad', 32));
    expect(await viaPrisma(payment.id)).toMatchObject({ status: 'confirmed', txHash: theirs });
  });

  it('confirms payments by their transfer: two of one transaction, never one transfer twice', async () => {
    const confirmation = (transferLogIndex: number) => ({
      txHash: hex('c1', 32),
      transferLogIndex,
      blockNumber: 5n,
      confirmedAt: new Date(),
      tokenKid: 'k',
      tokenIssuedAt: null,
      tokenExpiresAt: null,
    });
    const [first, second, third] = await Promise.all(['11', '12', '13'].map((byte) => claim(hex(byte, 32))));
    expect(await store.confirm(first.payment.id, confirmation(1), null)).toBe('confirmed');
    expect(await store.confirm(second.payment.id, confirmation(3), null)).toBe('confirmed');
    await expect(store.confirm(third.payment.id, confirmation(3), null)).rejects.toThrow();
    expect(await viaPrisma(third.payment.id)).toMatchObject({ status: 'submitting', txHash: null });
  });

  it('confirms nothing more in a transaction whose payment was confirmed before transfers were told apart', async () => {
    const legacyTx = hex('c2', 32);
    const legacy = await claim(hex('21', 32));
    await test.database.prisma.payment.update({
      where: { id: legacy.payment.id },
      data: { status: 'confirmed', txHash: legacyTx, transferLogIndex: null },
    });
    const { payment } = await claim(hex('22', 32));
    const at = new Date();
    const later = { txHash: legacyTx, transferLogIndex: 3, blockNumber: 5n, confirmedAt: at, tokenKid: 'k' };
    expect(await store.confirm(payment.id, { ...later, tokenIssuedAt: at, tokenExpiresAt: at }, null)).toBe(
      'not-confirmed',
    );
    expect(await viaPrisma(payment.id)).toMatchObject({ status: 'submitting', txHash: null });
  });

  it('reads the payments of many authorizations at once, each by its own payer and nonce', async () => {
    const other = hex('b2', 20);
    const [mine, theirs] = await Promise.all([claim(hex('31', 32)), claim(hex('32', 32), other)]);
    const found = await store.byNonces({ chainId: 31337, asset: ASSET }, [
      { payer: PAYER, nonce: hex('31', 32) },
      { payer: other, nonce: hex('32', 32) },
      // Each payer's nonce is matched with that payer only: the other's nonce is not this payer's.
      { payer: PAYER, nonce: hex('32', 32) },
      { payer: other, nonce: hex('31', 32) },
      { payer: PAYER, nonce: hex('fe', 32) },
    ]);
    expect(found.map((payment) => payment.id).sort()).toEqual([mine.payment.id, theirs.payment.id].sort());
    expect(found.find((payment) => payment.id === mine.payment.id)).toEqual(await viaPrisma(mine.payment.id));
    expect(await store.byNonces({ chainId: 1, asset: ASSET }, [{ payer: PAYER, nonce: hex('31', 32) }])).toEqual([]);
    expect(await store.byNonces({ chainId: 31337, asset: ASSET }, [])).toEqual([]);
    // A longer value is no payer's nonce: it never matches by its first 66 characters.
    await expect(
      store.byNonces({ chainId: 31337, asset: ASSET }, [{ payer: PAYER, nonce: `${hex('31', 32)}zz` }]),
    ).rejects.toThrow(/32-byte/);
  });

  it("reads a transaction's payments, one transfer's other than a given one's, and a payment-identifier's", async () => {
    const tx = hex('c3', 32);
    const at = new Date();
    const confirmation = (transferLogIndex: number) => ({
      txHash: tx,
      transferLogIndex,
      blockNumber: 6n,
      confirmedAt: at,
      tokenKid: 'k',
      tokenIssuedAt: at,
      tokenExpiresAt: at,
    });
    const [first, second] = await Promise.all([claim(hex('41', 32)), claim(hex('42', 32))]);
    await store.confirm(first.payment.id, confirmation(1), null);
    await store.confirm(second.payment.id, confirmation(4), null);
    expect((await store.byTransaction(31337, tx)).map((payment) => payment.id).sort()).toEqual(
      [first.payment.id, second.payment.id].sort(),
    );
    expect(await store.byTransaction(1, tx)).toEqual([]);
    const fourth = { chainId: 31337, txHash: tx, transferLogIndex: 4 };
    expect(await store.byTransfer(fourth)).toEqual(await viaPrisma(second.payment.id));
    expect(await store.byTransfer(fourth, first.payment.id)).toEqual(await viaPrisma(second.payment.id));
    expect(await store.byTransfer(fourth, second.payment.id)).toBeNull();
    expect(await store.byTransfer({ ...fourth, transferLogIndex: 2 })).toBeNull();

    const transferRow = {
      gateId: randomUUID(),
      siteId: onSite.site.id,
      publisherId: onSite.site.publisherId,
      url: '/t',
      method: 'transfer',
      status: 'submitted',
      chainId: 31337,
      asset: ASSET,
      payer: PAYER,
      payTo: hex('dd', 20),
      amount: 5n,
      txHash: hex('c4', 32),
      transferLogIndex: 0,
      paymentIdentifier: 'pay_0123456789abcdef',
    } as const;
    const transfer = await store.claimTransfer(transferRow);
    const key = { siteId: onSite.site.id, payer: PAYER, paymentIdentifier: 'pay_0123456789abcdef' };
    expect(await store.byIdentifier(key)).toEqual(transfer);
    expect(await store.byIdentifier({ ...key, payer: hex('b3', 20) })).toBeNull();
    // One transfer pays one gate.
    await expect(store.claimTransfer({ ...transferRow, gateId: randomUUID() })).rejects.toThrow();
  });

  it('lets whichever of a request and the reconciler takes a claim first broadcast it, and the other nothing', async () => {
    const ours = hex('a1', 32);
    const byRequest = await claim(hex('04', 32));
    expect(await store.takeForBroadcast(byRequest.payment.id, null, ours)).toBe(true);
    expect(await viaPrisma(byRequest.payment.id)).toMatchObject({ status: 'submitting', txHash: ours });
    expect(await store.markResubmitted(byRequest.payment.id, null, hex('a2', 32))).toBe(false);
    // Its broadcast refused (the nonce taken), the request takes it again for the next one.
    expect(await store.takeForBroadcast(byRequest.payment.id, ours, hex('a3', 32))).toBe(true);
    // Known not to have left: released only with the hash it was taken for.
    expect(await store.releaseUnsent(byRequest.payment.id)).toBe(false);
    expect(await store.releaseUnsent(byRequest.payment.id, ours)).toBe(false);
    expect(await store.releaseUnsent(byRequest.payment.id, hex('a3', 32))).toBe(true);

    const byReconciler = await claim(hex('05', 32));
    expect(await store.markResubmitted(byReconciler.payment.id, null, hex('a4', 32))).toBe(true);
    expect(await store.takeForBroadcast(byReconciler.payment.id, null, hex('a5', 32))).toBe(false);
    expect(await store.releaseUnsent(byReconciler.payment.id)).toBe(false);
    // Sent again only over the hash it was judged by.
    expect(await store.markResubmitted(byReconciler.payment.id, hex('a5', 32), hex('a6', 32))).toBe(false);
    expect(await store.markResubmitted(byReconciler.payment.id, hex('a4', 32), hex('a7', 32))).toBe(true);
    expect(await viaPrisma(byReconciler.payment.id)).toMatchObject({ status: 'submitted', txHash: hex('a7', 32) });
  });

  it('leaves a claim its request took for a broadcast to it until untouched for a claim’s wait', async () => {
    const old = new Date(Date.now() - 120_000);
    const unsent = await claim(hex('53', 32));
    const taken = await claim(hex('54', 32));
    expect(await store.takeForBroadcast(taken.payment.id, null, hex('c4', 32))).toBe(true);
    await test.database.prisma.payment.updateMany({
      where: { id: { in: [unsent.payment.id, taken.payment.id] } },
      data: { createdAt: old },
    });
    let ids = (await store.openForReconciliation(60_000, 1_000)).map((payment) => payment.id);
    expect(ids).toContain(unsent.payment.id);
    expect(ids).not.toContain(taken.payment.id);
    await test.database.prisma.payment.update({ where: { id: taken.payment.id }, data: { checkedAt: old } });
    ids = (await store.openForReconciliation(60_000, 1_000)).map((payment) => payment.id);
    expect(ids).toContain(taken.payment.id);
    await test.database.prisma.payment.deleteMany({ where: { id: { in: [unsent.payment.id, taken.payment.id] } } });
  });

  it('hands the reconciler the least recently checked open payments, and stamps them', async () => {
    const fresh = await claim(hex('51', 32));
    const broadcast = await claim(hex('52', 32));
    await store.takeForBroadcast(broadcast.payment.id, null, hex('c5', 32));
    await store.markSubmitted(broadcast.payment.id, hex('c5', 32));
    // A claim not yet broadcast is left to its request until it is `claimAgeMs` old.
    const all = await store.openForReconciliation(60_000, 1_000);
    expect(all.map((payment) => payment.id)).toContain(broadcast.payment.id);
    expect(all.map((payment) => payment.id)).not.toContain(fresh.payment.id);
    const stamped = await viaPrisma(broadcast.payment.id);
    expect(stamped?.checkedAt).not.toBeNull();
    // Round robin: the call above stamped `broadcast`, not `fresh`, which now comes before it.
    const ids = (await store.openForReconciliation(-60_000, 1_000)).map((payment) => payment.id);
    expect(ids.indexOf(fresh.payment.id)).toBeGreaterThanOrEqual(0);
    expect(ids.indexOf(fresh.payment.id)).toBeLessThan(ids.indexOf(broadcast.payment.id));
  });

  it('resubmits and forgets only what is not confirmed', async () => {
    const open = await claim(hex('61', 32));
    await store.markResubmitted(open.payment.id, null, hex('c6', 32));
    expect(await viaPrisma(open.payment.id)).toMatchObject({ status: 'submitted', txHash: hex('c6', 32) });
    const at = new Date();
    const done = { transferLogIndex: 1, blockNumber: 7n, confirmedAt: at, tokenKid: 'k', tokenIssuedAt: at };
    await store.confirm(open.payment.id, { ...done, txHash: hex('c6', 32), tokenExpiresAt: at }, null);
    expect(await store.markResubmitted(open.payment.id, hex('c6', 32), hex('c7', 32))).toBe(false);
    await store.deleteUnconfirmed(open.payment.id);
    expect(await viaPrisma(open.payment.id)).toMatchObject({ status: 'confirmed', txHash: hex('c6', 32) });
    const released = await claim(hex('62', 32));
    await store.deleteUnconfirmed(released.payment.id);
    expect(await viaPrisma(released.payment.id)).toBeNull();
  });

  it('throws when the claim it marks submitted is gone', async () => {
    await expect(store.markSubmitted(randomUUID(), TX)).rejects.toThrow(/is gone/);
  });

  it('writes no claim judged by other terms than its site’s now: a prices’ version or payout address since changed', async () => {
    const { asJudged } = onSite;
    const changed = [
      { ...asJudged, pricingVersion: asJudged.pricingVersion + 1 },
      { ...asJudged, payoutAddress: hex('ee', 20) },
    ];
    for (const [index, terms] of changed.entries()) {
      const nonce = hex(`e${index}`, 32);
      await expect(onSite.claim(nonce, PAYER, terms)).rejects.toBeInstanceOf(PaymentTermsChanged);
      expect(await store.byNonce({ chainId: 31337, asset: ASSET, payer: PAYER, nonce })).toBeNull();
    }
  });

  it("knows a payer by its payments to the publisher's sites confirmed within a window, on this chain and token only", async () => {
    const payer = hex('b1', 20);
    const publisherId = onSite.site.publisherId;
    const known = (
      within: number,
      key: Partial<{ chainId: number; asset: string; payer: string; publisherId: string }> = {},
    ) => store.hasPaidPublisherWithin({ chainId: 31337, asset: ASSET, payer, publisherId, ...key }, within);
    const { payment } = await claim(hex('b1', 32), payer);
    expect(await known(60_000)).toBe(false); // claimed, not settled
    const confirmedAt = new Date(Date.now() - 10 * 60_000);
    const receipt = { txHash: hex('b1', 32), transferLogIndex: 1, blockNumber: 5n, confirmedAt };
    await store.confirm(payment.id, { ...receipt, tokenKid: 'k', tokenIssuedAt: null, tokenExpiresAt: null }, null);
    expect(await known(60 * 60_000)).toBe(true);
    expect(await known(60 * 60_000, { payer: payer.toUpperCase().replace('0X', '0x') })).toBe(true);
    expect(await known(5 * 60_000)).toBe(false); // settled before the window
    expect(await known(60 * 60_000, { chainId: 1 })).toBe(false);
    expect(await known(60 * 60_000, { asset: hex('ab', 20) })).toBe(false);
    expect(await known(60 * 60_000, { payer: hex('b2', 20) })).toBe(false);
    // Paid to this publisher only: a payment to a site of one's own makes no one known to another.
    const elsewhere = await claimsOnNewSite(test.database, store);
    expect(await known(60 * 60_000, { publisherId: elsewhere.site.publisherId })).toBe(false);
  });

  it("reads a payer's other claims in flight, and its authorizations settled last, highest block first, within the hour", async () => {
    const payer = hex('b3', 20);
    const nonces = ['c1', 'c2', 'c3', 'c4'].map((byte) => hex(byte, 32));
    const claims: Payment[] = [];
    for (const nonce of nonces) claims.push((await claim(nonce, payer)).payment);
    const key = { payer, chainId: 31337, asset: ASSET };
    const settle = (i: number, minutesAgo: number, block: number) =>
      store.confirm(
        claims[i].id,
        {
          txHash: hex(`d${i}`, 32),
          transferLogIndex: 1,
          blockNumber: BigInt(block),
          confirmedAt: new Date(Date.now() - minutesAgo * 60_000),
          tokenKid: 'k',
          tokenIssuedAt: null,
          tokenExpiresAt: null,
        },
        null,
      );
    await settle(0, 90, 30); // confirmed before the hour
    // Confirmed last, in the lower block (confirmed late, or by an instance whose clock runs ahead).
    await settle(1, 5, 21);
    await settle(2, 1, 20);
    const nonceOf = (one: { nonce: string | null }) => one.nonce;

    expect((await store.othersInFlight({ ...claims[3], ...key })).map(nonceOf)).toEqual([]);
    expect((await store.othersInFlight({ ...claims[3], ...key, id: randomUUID() })).map(nonceOf)).toEqual([nonces[3]]);
    expect((await store.settledLast(key, 8)).map(nonceOf)).toEqual([nonces[1], nonces[2]]);
    expect(await store.settledLast(key, 1)).toEqual([{ amount: 1_000n, nonce: nonces[1] }]);
    expect(await store.settledLast({ ...key, asset: hex('ab', 20) }, 8)).toEqual([]);
  });

  it("counts a payer's relayed deposit in flight, by its lease and then each hash sent, while its authorization can still land", async () => {
    const payer = hex('b4', 20);
    const { payment } = await claim(hex('c5', 32), payer);
    const key = { payer, chainId: 31337, asset: ASSET };
    const lease = (nonce: string, amount: string | null, validBefore: string, takenAgo = '0 seconds') =>
      test.database.sql.query(
        `INSERT INTO deposit_leases (payer, lease_id, nonce, amount, valid_before, taken_at)
         VALUES ($1, gen_random_uuid(), $2, $3::bigint, now() + $4::interval, now() - $5::interval)
         ON CONFLICT (payer) DO UPDATE SET nonce = EXCLUDED.nonce, amount = EXCLUDED.amount,
                                           valid_before = EXCLUDED.valid_before, taken_at = EXCLUDED.taken_at`,
        [payer, nonce, amount, validBefore, takenAgo],
      );
    const sent = (txByte: string, nonce: string, validBefore: string, landedAgo: string | null = null) =>
      test.database.sql.query(
        `INSERT INTO channel_deposits (id, chain_id, channel_id, payer, authorization_nonce, tx_hash, nonce, amount, valid_before, landed_at)
         VALUES (gen_random_uuid(), 31337, $1, $2, $3, $4, 1, 80000, now() + $5::interval, now() - $6::interval)`,
        [hex('f0', 32), payer, nonce, hex(txByte, 32), validBefore, landedAgo],
      );
    const others = () => store.othersInFlight({ ...key, id: payment.id });
    const deposit = (byte: string, amount: bigint) => ({ amount, nonce: hex(byte, 32) });

    await lease(hex('e1', 32), '70000', '1 hour');
    expect(await others()).toEqual([deposit('e1', 70_000n)]);
    // Past its end, give or take a block clock's lag (AUTHORIZATION_CLOCK_SKEW_SECONDS, 600 s).
    await lease(hex('e1', 32), '70000', '-5 minutes');
    expect(await others()).toEqual([deposit('e1', 70_000n)]);
    await lease(hex('e1', 32), '70000', '-11 minutes');
    expect(await others()).toEqual([]);
    await lease(hex('e2', 32), null, '1 hour'); // taken before leases named their amount
    expect(await others()).toEqual([]);
    // A lease counts for the moments before its broadcast; one its process left unsent, ten minutes.
    await lease(hex('e3', 32), '70000', '1 hour', '11 minutes');
    expect(await others()).toEqual([]);
    // Sent, each hash written down counts (payerCoverage counts an authorization once) until one is seen landed.
    await sent('f1', hex('e3', 32), '1 hour');
    await sent('f2', hex('e3', 32), '1 hour');
    expect(await others()).toEqual([deposit('e3', 80_000n), deposit('e3', 80_000n)]);
    await test.database.sql.query(`UPDATE channel_deposits SET landed_at = now() WHERE tx_hash = $1`, [hex('f1', 32)]);
    await test.database.sql.query(`DELETE FROM channel_deposits WHERE tx_hash = $1`, [hex('f2', 32)]);
    expect(await others()).toEqual([]);
    // Landed within the hour, it is among those settled last (a node behind it answers a balance holding it).
    await sent('f3', hex('e4', 32), '1 hour', '2 hours');
    expect(await store.settledLast(key, 8)).toEqual([deposit('e3', 80_000n)]);
    expect(await store.othersInFlight({ ...key, payer: hex('b5', 20), id: payment.id })).toEqual([]);
    expect(await store.settledLast({ ...key, payer: hex('b5', 20) }, 8)).toEqual([]);
  });

  it('answers null for what is not there', async () => {
    expect(await store.byId(randomUUID())).toBeNull();
    expect(await store.byGate(randomUUID())).toBeNull();
    expect(await store.byNonce({ chainId: 31337, asset: ASSET, payer: PAYER, nonce: hex('ff', 32) })).toBeNull();
  });
});

/*
 * On PostgreSQL (on either run: a change held open needs a second connection, which PGlite does not
 * have): a claim holds its site's terms until it commits, so a change of them waits for the claim,
 * and a claim reaching a change held open waits for it and is then judged by what it left.
 */
describe('PaymentStore claims beside a change of their site held open', () => {
  let test: TestDatabase;
  let store: PaymentStore;
  let publisherSide: TestDatabase['database'];
  beforeAll(async () => {
    test = await createTestDatabase({ postgresUrl: FAULT_TEST_POSTGRES_URL });
    store = new PaymentStore(test.database);
    publisherSide = await test.connectAnother();
  });
  afterAll(() => test.dispose());

  /** The claim's outcome beside `change` of `siteId` held open, and whether it waited for it. */
  async function claimBeside(change: string, siteId: string, claim: () => Promise<unknown>) {
    const { waited, outcome } = await besideHeldChange(publisherSide, change, [siteId], claim);
    if (outcome.status === 'fulfilled') return { waited, outcome: 'written' };
    return { waited, outcome: outcome.reason instanceof PaymentTermsChanged ? 'terms-changed' : outcome.reason };
  }

  it('waits for a change of its prices and then writes nothing; one of another column waits and is written', async () => {
    const { site, claim } = await claimsOnNewSite(test.database, store);
    const nonce = (byte: string) => hex(byte, 32);
    const raise = 'UPDATE sites SET pricing_version = pricing_version + 1 WHERE id = $1::uuid';
    expect(await claimBeside(raise, site.id, () => claim(nonce('f1')))).toEqual({
      waited: true,
      outcome: 'terms-changed',
    });
    expect(await store.byNonce({ chainId: 31337, asset: ASSET, payer: PAYER, nonce: nonce('f1') })).toBeNull();
    const rename = "UPDATE sites SET domain = 'renamed-' || domain WHERE id = $1::uuid";
    const judgedNow = () => test.database.prisma.site.findUniqueOrThrow({ where: { id: site.id } });
    const terms = { pricingVersion: (await judgedNow()).pricingVersion, payoutAddress: null };
    expect(await claimBeside(rename, site.id, () => claim(nonce('f2'), PAYER, terms))).toEqual({
      waited: true,
      outcome: 'written',
    });
    const other = await claimsOnNewSite(test.database, store);
    const unrelated = 'UPDATE sites SET domain = domain WHERE id = $1::uuid';
    expect(await claimBeside(unrelated, other.site.id, () => claim(nonce('f3'), PAYER, terms))).toEqual({
      waited: false,
      outcome: 'written',
    });
  });
});
