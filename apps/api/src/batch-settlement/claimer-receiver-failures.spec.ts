import type { Hex } from 'viem';
import { pricedSite } from '../../test/fixtures';
import { fundEth, fundUsdc, newWallet, usdcBalance } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { batchOffer, testChannel } from '../../test/test-channel';
import { ClaimerHeartbeatStore } from './claimer-heartbeat.store';
import { ClaimerService } from './claimer.service';

/*
 * One receiver whose own transactions revert every run (real USDC refuses a transfer to a
 * blacklisted address, and anyone can name such an address as an unproven payout address) must
 * not stop batch settlement for every other site: the run counts for the others, and vouchers to
 * that receiver alone are refused once its claims have failed for as long as a missing run may
 * last. Only a revert of the receiver's own transaction is its own: a run in which nothing could
 * be sent or confirmed (a node refusing, a claim never mined) fails whole, as before, so vouchers
 * stop everywhere within three intervals (helper-351's F1 on the first attempt, 5b77e8a).
 */
describe('a receiver whose own claims revert every run', () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp({ isolateChain: true, claimerHeartbeat: false });
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await app?.close();
  });

  /** A batch-settlement site paid at a new address, and pay(): a new payer's voucher for one more page. */
  async function voucherSite() {
    const payTo = newWallet().address;
    const { site, publisher } = await pricedSite(app, payTo);
    await app.call('PATCH', `/v1/sites/${site.siteId}`, { body: { batch_settlement: true }, headers: publisher.auth });
    let page = 0;
    const pay = async () => {
      const payer = newWallet();
      await fundUsdc(app, payer.address, '1');
      await fundEth(app, payer.address);
      const offer = batchOffer(
        await app.call('POST', '/v1/gates', {
          body: { url: `/article/${page++}` },
          headers: { 'x-site-token': site.siteToken },
        }),
      );
      const channel = testChannel(app, payer, offer.accepted);
      const payment = await channel.payment(offer, BigInt(offer.accepted.amount), { deposit: 100_000n });
      return app.call('POST', `/v1/gates/${offer.id}/verify`, { body: { payment } });
    };
    return { payTo: payTo.toLowerCase() as Hex, pay };
  }

  /** Replaces every stored voucher signature of `receiver` with another key's: the escrow reverts its claim. */
  async function spoilVouchersOf(receiver: Hex): Promise<() => Promise<void>> {
    const rows = await app.database.sql.query<{ channel_id: string; signature: string }>(
      'SELECT channel_id, signature FROM payment_channels WHERE receiver = $1 AND signature IS NOT NULL',
      [receiver],
    );
    expect(rows.length).toBeGreaterThan(0);
    const forged = await newWallet().signMessage({ message: 'not a voucher' });
    await app.database.sql.query('UPDATE payment_channels SET signature = $1 WHERE receiver = $2', [forged, receiver]);
    return async () => {
      for (const row of rows)
        await app.database.sql.query('UPDATE payment_channels SET signature = $1 WHERE channel_id = $2', [
          row.signature,
          row.channel_id,
        ]);
    };
  }

  /** A quarter of the withdraw delay and a minute: past what a run made only when asked (as here) counts. */
  const tooOldSeconds = () => app.config.chain.batchSettlement.withdrawDelaySeconds / 4 + 60;
  const ageHeartbeat = () =>
    app.database.sql.query(`UPDATE job_heartbeats SET completed_at = now() - make_interval(secs => $1)`, [
      tooOldSeconds(),
    ]);
  const ageFailures = () =>
    app.database.sql.query(`UPDATE receiver_claim_failures SET since = now() - make_interval(secs => $1)`, [
      tooOldSeconds(),
    ]);
  const failures = () => app.database.sql.query<{ receiver: string }>('SELECT receiver FROM receiver_claim_failures');

  it('counts the run for the other receivers, and refuses vouchers to that one alone once it has failed too long', async () => {
    const failing = await voucherSite();
    const healthy = await voucherSite();
    const claimer = app.app.get(ClaimerService);
    expect((await claimer.runOnce()).skipped).toBe(false); // a first run: vouchers are taken
    expect((await failing.pay()).status).toBe(200);
    expect((await healthy.pay()).status).toBe(200);
    const restore = await spoilVouchersOf(failing.payTo);

    await ageHeartbeat();
    const run = await claimer.runOnce({ force: true });
    // The healthy receiver was claimed and settled, and the run counts.
    expect(run.settles).toHaveLength(1);
    expect(await usdcBalance(app, healthy.payTo)).toBe(10_000n);
    expect((await app.app.get(ClaimerHeartbeatStore).last())!.ageMs).toBeLessThan(60_000);
    expect(await failures()).toEqual([{ receiver: failing.payTo }]);
    expect((await healthy.pay()).status).toBe(200);
    // Failing for less than the window: its vouchers are still taken.
    expect((await failing.pay()).status).toBe(200);

    await ageFailures();
    await claimer.runOnce({ force: true });
    const refused = await failing.pay();
    expect(refused.status).toBe(503);
    expect(refused.body.detail).toMatch(/claims for this payout address have failed.*nothing was charged/i);
    expect((await healthy.pay()).status).toBe(200);

    // Its claims go through again: the failure ends, and its vouchers are taken again.
    await restore();
    const healed = await claimer.runOnce({ force: true });
    expect(healed.claims.length).toBeGreaterThan(0);
    expect(await failures()).toEqual([]);
    expect(await usdcBalance(app, failing.payTo)).toBeGreaterThan(0n);
    expect((await failing.pay()).status).toBe(200);
  });

  it('keeps the failure through a run that sends it nothing, so its window does not start again', async () => {
    const failing = await voucherSite();
    const claimer = app.app.get(ClaimerService);
    await claimer.runOnce();
    expect((await failing.pay()).status).toBe(200);
    const restore = await spoilVouchersOf(failing.payTo);
    await claimer.runOnce({ force: true });
    expect(await failures()).toHaveLength(1);
    await ageFailures();
    // Not forced: one page is below CLAIM_MIN_MICROS and young, so nothing is sent, and nothing landed.
    const quiet = await claimer.runOnce();
    expect(quiet.claims).toEqual([]);
    expect(await failures()).toHaveLength(1);
    expect((await failing.pay()).status).toBe(503);
    await restore();
  });

  it('clears the failure of a receiver left with nothing to claim (a refund claimed it all), so its vouchers are taken again', async () => {
    const site = await voucherSite();
    const claimer = app.app.get(ClaimerService);
    await claimer.runOnce();
    // Failing for long, with nothing unclaimed: only the failure brings the run to it.
    const batch = app.chain.batchSettlement!;
    await app.app.get(ClaimerHeartbeatStore).recordOwnRevert(
      {
        chainId: app.chain.chainId,
        escrow: batch.escrow,
        receiverAuthorizer: batch.authorizer.address,
        receiver: site.payTo,
        token: app.chain.usdc,
      },
      0,
    );
    await ageFailures();
    expect((await site.pay()).status).toBe(503);
    await claimer.runOnce();
    expect(await failures()).toEqual([]);
    expect((await site.pay()).status).toBe(200);
  });

  // What is not a receiver's own revert fails the run whole: the heartbeat is not written, so
  // vouchers stop on every site, new receivers' included, and no receiver is marked failing.
  it.each([
    [
      'the node refuses every gas estimate',
      (a: TestApp) =>
        jest.spyOn(a.chain.relayer, 'prepareTransactionRequest').mockRejectedValue(new Error('node unreachable')),
    ],
    [
      'the node refuses every broadcast',
      (a: TestApp) => jest.spyOn(a.chain.relayer, 'sendRawTransaction').mockRejectedValue(new Error('txpool is full')),
    ],
  ])('fails the run whole when %s', async (_name, breakSends) => {
    const site = await voucherSite();
    const claimer = app.app.get(ClaimerService);
    await claimer.runOnce();
    expect((await site.pay()).status).toBe(200);
    await ageHeartbeat();
    breakSends(app);
    const run = await claimer.runOnce({ force: true });
    expect(run.settles).toEqual([]);
    expect((await app.app.get(ClaimerHeartbeatStore).last())!.ageMs).toBeGreaterThan(tooOldSeconds() * 1000 - 1000);
    expect(await failures()).toEqual([]);
    jest.restoreAllMocks(); // the newcomer's deposit could be sent: only the missing run refuses it
    const newcomer = await voucherSite();
    const refused = await newcomer.pay();
    expect(refused.status).toBe(503);
    expect(refused.body.detail).toMatch(/no claimer has finished a run.*nothing was charged/i);
  });
});
