import { blacklistTestUsdc } from '@crawlgate/devchain';
import type { Hex } from 'viem';
import { batchSettlementSite } from '../../test/fixtures';
import { fundEth, fundUsdc, newWallet, usdcBalance } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { batchGate, testChannel } from '../../test/test-channel';
import { unsettled } from '../chain/escrow';
import { ClaimerHeartbeatStore } from './claimer-heartbeat.store';
import { ClaimerService } from './claimer.service';

/*
 * Real USDC refuses a transfer to a blacklisted address, and anyone can name one as an unproven
 * payout address: the settle to it reverts every run. That must not stop batch settlement on every
 * site (it did: the run failed whole, the heartbeat aged, and every site's vouchers were refused).
 * Its claims still land, so what vouchers charged is in the escrow, credited to that receiver and
 * out of any payer's withdrawal. Only a settle the token refuses for that receiver alone counts so
 * (a transfer of the same amount from the escrow to another address goes through): a settle every
 * receiver's would meet (the escrow blacklisted, say) fails the run (helper-355's F1). Anything
 * else failing still fails the run whole: a claim never
 * calls the token, so its revert is ours or the node's (helper-352's H1 on 8f990ba, which took it
 * for the receiver's own), and a node refusing or a claim never mined would fail any receiver
 * (helper-351's F1 on 5b77e8a, which took every failure for the receiver's own).
 */
describe('a claimer run with one receiver the token refuses', () => {
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
    const { site } = await batchSettlementSite(app, payTo);
    const pay = async () => {
      const payer = newWallet();
      await fundUsdc(app, payer.address, '1');
      await fundEth(app, payer.address);
      const offer = await batchGate(app, site);
      const channel = testChannel(app, payer, offer.accepted);
      const payment = await channel.payment(offer, BigInt(offer.accepted.amount), { deposit: 100_000n });
      return app.call('POST', `/v1/gates/${offer.id}/verify`, { body: { payment } });
    };
    return { payTo: payTo.toLowerCase() as Hex, pay };
  }

  const blacklist = (account: Hex, blacklisted = true) =>
    blacklistTestUsdc({ rpcUrl: app.chain.rpcUrl, usdc: app.chain.usdc, account, blacklisted });
  const unsettledOf = (receiver: Hex) => unsettled(app.chain, app.chain.batchSettlement!, receiver, app.chain.usdc);
  /** A quarter of the withdraw delay and a minute: past what a run made only when asked (as here) counts. */
  const tooOldSeconds = () => app.config.chain.batchSettlement.withdrawDelaySeconds / 4 + 60;
  const ageHeartbeat = () =>
    app.database.sql.query(`UPDATE job_heartbeats SET completed_at = now() - make_interval(secs => $1)`, [
      tooOldSeconds(),
    ]);
  const heartbeatAgeMs = async () => (await app.app.get(ClaimerHeartbeatStore).last())!.ageMs;

  it("counts the run when the settle to a blacklisted payout address reverts: its claims stand in the escrow, the others' are settled, vouchers flow on every site", async () => {
    const refused = await voucherSite();
    const healthy = await voucherSite();
    const claimer = app.app.get(ClaimerService);
    expect((await claimer.runOnce()).skipped).toBe(false); // a first run: vouchers are taken
    expect((await refused.pay()).status).toBe(200);
    expect((await healthy.pay()).status).toBe(200);
    await blacklist(refused.payTo);

    await ageHeartbeat();
    const run = await claimer.runOnce({ force: true });
    expect(run.claims).toHaveLength(2);
    expect(run.settles).toHaveLength(1); // the healthy receiver's; the other's reverted in its estimate
    expect(await usdcBalance(app, healthy.payTo)).toBe(10_000n);
    expect(await usdcBalance(app, refused.payTo)).toBe(0n);
    expect(await unsettledOf(refused.payTo)).toBe(10_000n); // claimed: no payer can withdraw it
    expect(await heartbeatAgeMs()).toBeLessThan(60_000);

    // Vouchers are taken on every site, the refused receiver's included: its claims land.
    expect((await (await voucherSite()).pay()).status).toBe(200);
    expect((await healthy.pay()).status).toBe(200);
    expect((await refused.pay()).status).toBe(200);
    await claimer.runOnce({ force: true });
    expect(await unsettledOf(refused.payTo)).toBe(20_000n);
    expect(await heartbeatAgeMs()).toBeLessThan(60_000);

    // Once the token lets it, the next run settles all it holds.
    await blacklist(refused.payTo, false);
    const settled = await claimer.runOnce({ force: true });
    expect(settled.settles.length).toBeGreaterThan(0);
    expect(await usdcBalance(app, refused.payTo)).toBe(20_000n);
    expect(await unsettledOf(refused.payTo)).toBe(0n);
  });

  /** Replaces every stored voucher signature of `receiver` with another key's: the escrow reverts its claim. */
  async function spoilVouchersOf(receiver: Hex): Promise<void> {
    const forged = await newWallet().signMessage({ message: 'not a voucher' });
    const spoiled = await app.database.sql.query(
      'UPDATE payment_channels SET signature = $1 WHERE receiver = $2 AND signature IS NOT NULL RETURNING 1',
      [forged, receiver],
    );
    expect(spoiled.length).toBeGreaterThan(0);
  }

  // What is not a settle's revert fails the run whole: the heartbeat is not written, so vouchers
  // stop on every site, new receivers' included, within three intervals.
  it.each([
    ['a claim reverts (a bad voucher row of ours)', (_a: TestApp, receiver: Hex) => spoilVouchersOf(receiver)],
    [
      // Every settle reverts, not one receiver's (as when USDC is paused, or the escrow holds less than it owes).
      'the token refuses the escrow itself',
      (a: TestApp) =>
        blacklistTestUsdc({ rpcUrl: a.chain.rpcUrl, usdc: a.chain.usdc, account: a.chain.batchSettlement!.escrow }),
    ],
    [
      'the node refuses every gas estimate',
      (a: TestApp) => {
        jest.spyOn(a.chain.relayer, 'prepareTransactionRequest').mockRejectedValue(new Error('node unreachable'));
      },
    ],
    [
      'the node refuses every broadcast',
      (a: TestApp) => {
        jest.spyOn(a.chain.relayer, 'sendRawTransaction').mockRejectedValue(new Error('txpool is full'));
      },
    ],
  ])('fails the run whole when %s', async (_name, breakIt) => {
    const site = await voucherSite();
    const claimer = app.app.get(ClaimerService);
    await claimer.runOnce();
    expect((await site.pay()).status).toBe(200);
    await ageHeartbeat();
    await breakIt(app, site.payTo);
    const run = await claimer.runOnce({ force: true });
    expect(run.settles).toEqual([]);
    expect(await heartbeatAgeMs()).toBeGreaterThan(tooOldSeconds() * 1000 - 1000);
    jest.restoreAllMocks(); // the newcomer's deposit could be sent: only the missing run refuses it
    const newcomer = await voucherSite();
    const refusal = await newcomer.pay();
    expect(refusal.status).toBe(503);
    expect(refusal.body.detail).toMatch(/no claimer has finished a run.*nothing was charged/i);
  });
});
