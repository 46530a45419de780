import { blacklistTestUsdc } from '@crawlgate/devchain';
import type { Hex } from 'viem';
import { batchSettlementSite } from '../../test/fixtures';
import { fundUsdc, newWallet, usdcBalance } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { batchGate, escrowRead, testChannel, type BatchOffer } from '../../test/test-channel';
import { unsettled } from '../chain/escrow';

/*
 * A cooperative refund claims what was charged, settles it to the receiver and returns the rest,
 * in one transaction. Real USDC refuses a transfer to a blacklisted address, and anyone can name
 * one as an unproven payout address: the settle reverted, so the whole refund did, and a payer of
 * that site got its deposit's rest back only by a timed withdrawal (helper-352's L2). The refund
 * now goes without the settle then: what was charged is claimed, in the escrow credited to the
 * receiver, and the rest goes back at once.
 */
describe('a refund for a receiver the token refuses', () => {
  let app: TestApp;
  afterEach(() => app?.close());

  it('claims what was charged without settling it, and returns the rest to the payer at once', async () => {
    app = await startTestApp({ isolateChain: true });
    const payTo = newWallet().address.toLowerCase() as Hex;
    const { site } = await batchSettlementSite(app, payTo);
    const gate = (): Promise<BatchOffer> => batchGate(app, site);
    const verify = (offer: BatchOffer, payment: unknown) =>
      app.call('POST', `/v1/gates/${offer.id}/verify`, { body: { payment } });
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    const first = await gate();
    const channel = testChannel(app, payer, first.accepted);
    expect((await verify(first, await channel.payment(first, 10_000n, { deposit: 50_000n }))).status).toBe(200);
    const second = await gate();
    expect((await verify(second, await channel.payment(second, 20_000n))).status).toBe(200);

    await blacklistTestUsdc({ rpcUrl: app.chain.rpcUrl, usdc: app.chain.usdc, account: payTo });
    const payerBefore = await usdcBalance(app, payer.address);
    const offer = await gate();
    const voucher = await channel.payment(offer, 20_000n);
    const response = await verify(offer, { ...voucher, payload: { ...voucher.payload, type: 'refund' } });
    expect([response.status, response.body.status, response.body.refund_amount]).toEqual([200, 'refunded', '30000']);
    expect(await usdcBalance(app, payer.address)).toBe(payerBefore + 30_000n);
    // Claimed: no payer's withdrawal can take it; the receiver's to settle once the token lets it.
    expect(await escrowRead(app, 'channels', channel.channelId)).toEqual([20_000n, 20_000n]);
    expect(await unsettled(app.chain, app.chain.batchSettlement!, payTo, app.chain.usdc)).toBe(20_000n);
    expect(await usdcBalance(app, payTo)).toBe(0n);
  });
});
