import { BATCH_SETTLEMENT_ABI } from '@crawlgate/core';
import { revert, snapshot } from '@crawlgate/devchain';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Hex } from 'viem';
import { batchSettlementSite } from '../../test/fixtures';
import { fundUsdc, newWallet, usdcBalance } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { batchOffer, testChannel, type BatchOffer } from '../../test/test-channel';
import { ChannelStore } from './channel.store';
import { ClaimerService } from './claimer.service';
import { RefundsService } from './refunds.service';

/*
 * A cooperative refund claims what the channel was charged in the same transaction that returns the
 * rest. Its hold ends, and the channel leaves the claimer's queue, only once that transaction is as
 * deep as CONFIRMATIONS: taken as landed at one confirmation, a reorg dropping it left what was
 * charged unclaimed and out of the queue, for the payer to withdraw after the delay.
 */
describe('a refund short of the confirmations (CONFIRMATIONS=2)', () => {
  const PRICE = 10_000n; // the site's default 0.01 USD

  it('keeps its hold and the channel queued until it is that deep: a reorg dropping it leaves what was charged to the claimer', async () => {
    const masterKey = randomBytes(32);
    const payTo = newWallet().address;
    const app = await startTestApp({ isolateChain: true, masterKey });
    let confirming: TestApp | undefined;
    try {
      const { site } = await batchSettlementSite(app, payTo);
      const gate = async (): Promise<BatchOffer> =>
        batchOffer(
          await app.call('POST', '/v1/gates', {
            body: { url: `/article/${randomUUID()}` },
            headers: { 'x-site-token': site.siteToken },
          }),
        );
      const payer = newWallet();
      await fundUsdc(app, payer.address, '1');
      const first = await gate();
      const channel = testChannel(app, payer, first.accepted);
      const paid = await app.call('POST', `/v1/gates/${first.id}/verify`, {
        body: { payment: await channel.payment(first, PRICE, { deposit: 50_000n }) },
      });
      expect(paid.status).toBe(200);
      const escrowChannel = () =>
        app.chain.publicClient.readContract({
          address: app.chain.batchSettlement!.escrow,
          abi: BATCH_SETTLEMENT_ABI,
          functionName: 'channels',
          args: [channel.channelId as Hex],
        });

      // An instance waiting for two confirmations, on the same database and chain, is asked for the refund.
      confirming = await startTestApp({
        database: app.database,
        masterKey,
        chainRpcUrl: app.chain.rpcUrl,
        config: { chain: { confirmations: 2, settlementTimeoutMs: 400 } },
      });
      const beforeRefund = await snapshot(app.chain.rpcUrl);
      const offer = await gate();
      const voucher = await channel.payment(offer, PRICE);
      const asked = await confirming.call('POST', `/v1/gates/${offer.id}/verify`, {
        body: { payment: { ...voucher, payload: { ...voucher.payload, type: 'refund' } } },
      });
      // Mined with one confirmation, not confirmed in time: the request stops waiting.
      expect(asked.status).toBe(503);
      expect(await escrowChannel()).toEqual([PRICE, PRICE]);

      // A voucher finding the channel held, or the background sweep, sees it at that depth: not landed yet.
      expect(await confirming.app.get(RefundsService).releaseIfOver(channel.channelId as Hex)).toBe(false);
      expect((await app.app.get(ChannelStore).refundRecord(channel.channelId))?.hold).not.toBeNull();
      const row = () =>
        app.database.prisma.paymentChannel.findUniqueOrThrow({ where: { channelId: channel.channelId } });
      expect((await row()).unclaimedSince).not.toBeNull();

      // The reorg: the refund's block is gone, and the refund with it.
      await revert(app.chain.rpcUrl, beforeRefund);
      expect(await escrowChannel()).toEqual([50_000n, 0n]);
      const run = await app.app.get(ClaimerService).runOnce({ force: true });
      expect(run.claims).toHaveLength(1);
      expect(await escrowChannel()).toEqual([50_000n, PRICE]);
      expect(await usdcBalance(app, payTo)).toBe(PRICE);
    } finally {
      await confirming?.close();
      await app.close();
    }
  });
});
