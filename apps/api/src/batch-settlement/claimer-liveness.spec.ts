import { randomBytes } from 'node:crypto';
import { generatePrivateKey } from 'viem/accounts';
import { pricedSite } from '../../test/fixtures';
import { fundUsdc, newWallet } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { batchOffer, testChannel } from '../../test/test-channel';
import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { claimDeadlineMs, ClaimerService, isRecent } from './claimer.service';

/*
 * A voucher is money only once a claim collects it: a payer who withdraws before any claim gets
 * back what it paid for pages already served. So an API takes vouchers only while some instance's
 * claimer (its own, or another's on the same database when its CLAIM_INTERVAL_MS is 0) has finished
 * a run recently, as the database says. Attacked as a payer would: pages paid while nothing claims.
 */

/** A voucher for a new batch-settlement site's page on `app`: pay() posts it, charged() reads its channel. */
async function voucherPage(app: TestApp) {
  const payTo = newWallet().address;
  const { site, publisher } = await pricedSite(app, payTo);
  await app.call('PATCH', `/v1/sites/${site.siteId}`, { body: { batch_settlement: true }, headers: publisher.auth });
  const payer = newWallet();
  await fundUsdc(app, payer.address, '1');
  const created = await app.call('POST', '/v1/gates', {
    body: { url: '/article/1' },
    headers: { 'x-site-token': site.siteToken },
  });
  const offer = batchOffer(created);
  const channel = testChannel(app, payer, offer.accepted);
  const payment = await channel.payment(offer, BigInt(offer.accepted.amount), { deposit: 100_000n });
  const pay = () => app.call('POST', `/v1/gates/${offer.id}/verify`, { body: { payment } });
  const charged = async () =>
    (await app.database.prisma.paymentChannel.findUnique({ where: { channelId: channel.channelId.toLowerCase() } }))
      ?.charged ?? 0n;
  return { pay, charged };
}

describe('vouchers and the claimer that collects them', () => {
  let app: TestApp;
  beforeEach(async () => {
    // No claimer has run on this database: this instance's is off (the tests' default) and no other exists.
    app = await startTestApp({ isolateChain: true, claimerHeartbeat: false });
  });
  afterEach(() => app?.close());

  it('takes no voucher while no claimer has ever finished a run; the same voucher is taken once one has', async () => {
    const { pay, charged } = await voucherPage(app);
    const refused = await pay();
    expect(refused.status).toBe(503);
    expect(refused.body.detail).toMatch(/no claimer has finished a run.*nothing was charged/i);
    expect(await charged()).toBe(0n);

    expect((await app.app.get(ClaimerService).runOnce()).skipped).toBe(false);
    const taken = await pay();
    expect(taken.status).toBe(200);
    expect(await charged()).toBe(10_000n);
  });

  it("takes no voucher once the last claimer run is older than a quarter of the withdraw delay (another instance's claimer is down)", async () => {
    const { pay, charged } = await voucherPage(app);
    await app.app.get(ClaimerService).runOnce();
    const delayMs = app.config.chain.batchSettlement.withdrawDelaySeconds * 1000;
    // The run that instance finished is as old as a quarter of the delay and a minute.
    await app.database.sql.query(
      `UPDATE job_heartbeats SET completed_at = now() - make_interval(secs => $1) WHERE job LIKE 'claimer%'`,
      [delayMs / 4 / 1000 + 60],
    );
    const refused = await pay();
    expect(refused.status).toBe(503);
    expect(refused.body.detail).toMatch(/no claimer has finished a run.*nothing was charged/i);
    expect(await charged()).toBe(0n);
  });
});

describe("another instance's claimer on the same database", () => {
  let db: TestDatabase;
  const instances: TestApp[] = [];
  beforeEach(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    for (const instance of instances.splice(0).reverse()) await instance.close();
    await db.dispose();
  });

  it('counts only when it claims with the same escrow and claim authorizer: one under another key claims none of these vouchers', async () => {
    const masterKey = randomBytes(32);
    const own = await startTestApp({ database: db.database, masterKey, isolateChain: true, claimerHeartbeat: false });
    instances.push(own);
    const { batchSettlement } = own.config.chain;
    const otherKey = await startTestApp({
      database: await db.connectAnother(),
      masterKey,
      claimerHeartbeat: false,
      config: { chain: { batchSettlement: { ...batchSettlement, claimAuthorizerPrivateKey: generatePrivateKey() } } },
    });
    instances.push(otherKey);
    expect(otherKey.chain.batchSettlement!.authorizer.address).not.toBe(own.chain.batchSettlement!.authorizer.address);
    const { pay, charged } = await voucherPage(own);

    // The instance under another key finishes a run: it would claim only channels naming its key.
    expect((await otherKey.app.get(ClaimerService).runOnce()).skipped).toBe(false);
    const refused = await pay();
    expect(refused.status).toBe(503);
    expect(refused.body.detail).toMatch(/no claimer has finished a run.*nothing was charged/i);
    expect(await charged()).toBe(0n);

    // One under the same key finishes a run: the voucher is taken.
    expect((await own.app.get(ClaimerService).runOnce()).skipped).toBe(false);
    expect((await pay()).status).toBe(200);
    expect(await charged()).toBe(10_000n);
  });
});

describe('isRecent', () => {
  const quarterDay = 6 * 3_600_000;
  const off = { withdrawDelaySeconds: 86_400, claimIntervalMs: 0 }; // this instance claims nothing itself
  it("judges a run by three of its instance's intervals, never past a quarter of the withdraw delay", () => {
    expect(isRecent({ ageMs: 180_000, intervalMs: 60_000 }, off)).toBe(true);
    expect(isRecent({ ageMs: 180_001, intervalMs: 60_000 }, off)).toBe(false);
    // The longest interval a 900 s delay allows (225 s): three of them would outlast a quarter of it.
    const short = { withdrawDelaySeconds: 900, claimIntervalMs: 0 };
    expect(isRecent({ ageMs: 225_000, intervalMs: 225_000 }, short)).toBe(true);
    expect(isRecent({ ageMs: 225_001, intervalMs: 225_000 }, short)).toBe(false);
  });
  it('gives an instance that claims itself three of its own intervals, whoever ran last', () => {
    const claims = { withdrawDelaySeconds: 86_400, claimIntervalMs: 60_000 };
    expect(isRecent({ ageMs: 1_000, intervalMs: 300 }, claims)).toBe(true);
    expect(isRecent({ ageMs: 180_001, intervalMs: 300 }, claims)).toBe(false);
  });
  it('takes no run of a claimer whose runs are further apart than a quarter of this instance’s delay, however recent', () => {
    // Another instance on the database, configured for a day's delay and hourly runs: this one's
    // channels (900 s) would wait an hour for its next run.
    const short = { withdrawDelaySeconds: 900, claimIntervalMs: 0 };
    expect(isRecent({ ageMs: 1_000, intervalMs: 3_600_000 }, short)).toBe(false);
    expect(isRecent({ ageMs: 1_000, intervalMs: 225_001 }, short)).toBe(false);
    expect(isRecent({ ageMs: 1_000, intervalMs: 225_000 }, short)).toBe(true);
  });
  it('judges a run made only when asked (interval 0) by a quarter of the delay, and no run as none', () => {
    expect(isRecent({ ageMs: quarterDay, intervalMs: 0 }, off)).toBe(true);
    expect(isRecent({ ageMs: quarterDay + 1, intervalMs: 0 }, off)).toBe(false);
    expect(isRecent(undefined, off)).toBe(false);
  });
});

describe('claimDeadlineMs', () => {
  const settings = { claimMaxAgeSeconds: 3_600, claimIntervalMs: 60_000 };
  it('gives a channel CLAIM_MAX_AGE_SECONDS, never more than a quarter of its own withdraw delay', () => {
    expect(claimDeadlineMs(86_400, settings)).toBe(3_600_000);
    expect(claimDeadlineMs(900, settings)).toBe(225_000);
  });
  it('claims at every run a channel whose quarter delay is shorter than the interval between runs', () => {
    expect(claimDeadlineMs(900, { ...settings, claimIntervalMs: 3_600_000 })).toBe(0);
    expect(claimDeadlineMs(900, { ...settings, claimIntervalMs: 225_000 })).toBe(225_000);
  });
});
