import { pricedSite } from '../../test/fixtures';
import { fundEth, fundUsdc, newWallet, usdcBalance } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { batchOffer, testChannel } from '../../test/test-channel';
import { ChannelStore } from './channel.store';
import { ClaimerHeartbeatStore } from './claimer-heartbeat.store';
import { ClaimerService } from './claimer.service';

/*
 * One receiver whose claims fail every run (real USDC refuses a transfer to a blacklisted address,
 * and anyone can name such an address as its payout address) must not stop batch settlement for
 * every other site. The run counts for the others; vouchers to that receiver alone are refused once
 * its claims have failed for as long as a missing run would be allowed.
 */
describe('a receiver whose claims fail every run', () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp({ isolateChain: true, claimerHeartbeat: false });
  });
  afterEach(() => app?.close());

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
    return { payTo: payTo.toLowerCase() as `0x${string}`, pay };
  }

  it('counts the run for the other receivers, and refuses vouchers to that one alone once it has failed too long', async () => {
    const failing = await voucherSite();
    const healthy = await voucherSite();
    const claimer = app.app.get(ClaimerService);
    expect((await claimer.runOnce()).skipped).toBe(false); // a first run: vouchers are taken
    expect((await failing.pay()).status).toBe(200);
    expect((await healthy.pay()).status).toBe(200);

    const store = app.app.get(ChannelStore);
    const unclaimed = store.unclaimed.bind(store);
    jest
      .spyOn(store, 'unclaimed')
      .mockImplementation((signer, receiver, token, limit) =>
        receiver === failing.payTo
          ? Promise.reject(new Error('transfer to a blacklisted address'))
          : unclaimed(signer, receiver, token, limit),
      );
    const heartbeats = app.app.get(ClaimerHeartbeatStore);
    await app.database.sql.query(`UPDATE job_heartbeats SET completed_at = now() - interval '1 hour'`);
    const run = await claimer.runOnce({ force: true });
    // The healthy receiver was claimed and settled, and the run counts.
    expect(run.settles).toHaveLength(1);
    expect(await usdcBalance(app, healthy.payTo)).toBe(10_000n);
    expect((await heartbeats.last())!.ageMs).toBeLessThan(60_000);
    expect((await healthy.pay()).status).toBe(200);
    // Failing for less than the window: its vouchers are still taken.
    expect((await failing.pay()).status).toBe(200);

    // Failing for longer than a quarter of the withdraw delay (this instance runs its claimer only when asked).
    const delay = app.config.chain.batchSettlement.withdrawDelaySeconds;
    await app.database.sql.query(`UPDATE claim_failures SET since = now() - make_interval(secs => $1)`, [
      delay / 4 + 60,
    ]);
    await claimer.runOnce({ force: true });
    const refused = await failing.pay();
    expect(refused.status).toBe(503);
    expect(refused.body.detail).toMatch(/claims for this payout address have failed.*nothing was charged/i);
    expect((await healthy.pay()).status).toBe(200);

    // Its claims succeed again: its vouchers are taken again.
    jest.restoreAllMocks();
    await claimer.runOnce({ force: true });
    expect((await failing.pay()).status).toBe(200);
  });

  it('clears the failures of a receiver left with nothing to claim (a refund claimed it all), so its vouchers are taken again', async () => {
    const site = await voucherSite();
    const claimer = app.app.get(ClaimerService);
    await claimer.runOnce();
    // Failing for long, with nothing unclaimed: only the failures bring the run to it.
    const of = { chainId: app.chain.chainId, receiver: site.payTo, token: app.chain.usdc.toLowerCase() };
    await app.app.get(ClaimerHeartbeatStore).recordReceiverFailed(of, 0);
    await app.database.sql.query(`UPDATE claim_failures SET since = now() - interval '30 days'`);
    expect((await site.pay()).status).toBe(503);
    await claimer.runOnce();
    expect(await app.app.get(ClaimerHeartbeatStore).receiverFailure(of)).toBeUndefined();
    expect((await site.pay()).status).toBe(200);
  });
});
