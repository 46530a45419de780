import { BATCH_REASONS } from '@crawlgate/core';
import { mineBlocks, revert, snapshot } from '@crawlgate/devchain';
import { randomBytes } from 'node:crypto';
import { toHex, type Hex } from 'viem';
import { batchSettlementSite } from '../../test/fixtures';
import { startRpcRewriter, type RpcRewriter } from '../../test/rpc-rewriter';
import { fundUsdc, newWallet, usdcBalance } from '../../test/test-agent';
import { startConfirmingApp, startTestApp, type TestApp } from '../../test/test-app';
import { batchGate, escrowRead, testChannel, type BatchOffer } from '../../test/test-channel';
import { ChannelStore } from './channel.store';
import { ClaimerService } from './claimer.service';
import { RefundsService } from './refunds.service';

/*
 * A cooperative refund claims what the channel was charged in the same transaction that returns the
 * rest. Its hold ends, and the channel leaves the claimer's queue, only once a refund of the hold's
 * nonce is as deep as CONFIRMATIONS: taken as landed at one confirmation, a reorg dropping it left
 * what was charged unclaimed and out of the queue, for the payer to withdraw after the delay, and
 * its signature (which never expires) free to land again after vouchers taken against the funds it returns.
 */
describe('a refund short of the confirmations (CONFIRMATIONS=2)', () => {
  const PRICE = 10_000n; // the site's default 0.01 USD

  it('keeps its hold and the channel queued until it is that deep: a reorg dropping it leaves what was charged to the claimer', async () => {
    const masterKey = randomBytes(32);
    const paid = await paidChannel(masterKey);
    const { app, channel } = paid;
    let confirming: TestApp | undefined;
    try {
      confirming = await startConfirmingApp(app, { masterKey, chain: { settlementTimeoutMs: 400 } });
      const beforeRefund = await snapshot(app.chain.rpcUrl);
      const asked = await paid.askRefund(confirming);
      // Mined with one confirmation, not confirmed in time: the request stops waiting.
      expect(asked.status).toBe(503);
      expect(await paid.escrowChannel()).toEqual([PRICE, PRICE]);

      // A voucher finding the channel held, or the background sweep, sees it at that depth: not landed yet.
      expect(await confirming.app.get(RefundsService).releaseIfOver(channel.channelId as Hex)).toBe(false);
      expect(await paid.hold()).not.toBeNull();
      expect((await paid.row()).unclaimedSince).not.toBeNull();

      // The reorg: the refund's block is gone, and the refund with it.
      await revert(app.chain.rpcUrl, beforeRefund);
      expect(await paid.escrowChannel()).toEqual([50_000n, 0n]);
      const run = await app.app.get(ClaimerService).runOnce({ force: true });
      expect(run.claims).toHaveLength(1);
      expect(await paid.escrowChannel()).toEqual([50_000n, PRICE]);
      expect(await usdcBalance(app, paid.payTo)).toBe(PRICE);
    } finally {
      await confirming?.close();
      await app.close();
    }
  });

  it('keeps its hold when its transaction reverted and a refund of the same nonce is not that deep yet', async () => {
    const masterKey = randomBytes(32);
    const paid = await paidChannel(masterKey);
    const { app, channel } = paid;
    // On a true chain this is an earlier signature of the hold's nonce (a refund sent again after it
    // failed) landing in a block after ours reverted. Here a node says our refund reverted a block
    // deeper than it is: the refund nonce has moved at the latest block, not at the confirmed one.
    const escrow = app.chain.batchSettlement!.escrow.toLowerCase();
    let node: RpcRewriter | undefined;
    let confirming: TestApp | undefined;
    try {
      node = await startRpcRewriter(app.chain.rpcUrl, ({ method, result }) => {
        const receipt = result as { to?: string | null; blockNumber: Hex } | null;
        if (method !== 'eth_getTransactionReceipt' || receipt?.to?.toLowerCase() !== escrow) return result;
        return { ...receipt, status: '0x0', blockNumber: toHex(BigInt(receipt.blockNumber) - 1n) };
      });
      confirming = await startConfirmingApp(app, { masterKey, chainRpcUrl: node.url });
      const asked = await paid.askRefund(confirming);
      expect(asked.body).toMatchObject({ reason: BATCH_REASONS.refundTransactionFailed });
      expect(await paid.escrowChannel()).toEqual([PRICE, PRICE]);
      // The refund nonce moved at the latest block, not one block before it (the confirmed one).
      const head = await app.chain.publicClient.getBlockNumber({ cacheTime: 0 });
      expect([await paid.refundNonce(head - 1n), await paid.refundNonce(head)]).toEqual([0n, 1n]);
      expect(await paid.hold()).not.toBeNull();
      expect((await paid.row()).unclaimedSince).not.toBeNull();

      // One block more and the refund is as deep as the confirmations: the hold ends, the channel is claimed.
      await mineBlocks(app.chain.rpcUrl, 1);
      expect(await confirming.app.get(RefundsService).releaseIfOver(channel.channelId as Hex)).toBe(true);
      expect(await paid.hold()).toBeNull();
      expect(await paid.row()).toMatchObject({ claimed: PRICE, unclaimedSince: null });
    } finally {
      await confirming?.close();
      await node?.close();
      await app.close();
    }
  });

  /**
   * An isolated API with a batch-settlement site, and a payer's channel that paid one page from a
   * 50,000 deposit; askRefund asks `on` an instance for the rest back with the voucher for that page.
   */
  async function paidChannel(masterKey: Buffer) {
    const app = await startTestApp({ isolateChain: true, masterKey });
    try {
      const payTo = newWallet().address;
      const { site } = await batchSettlementSite(app, payTo);
      const gate = (): Promise<BatchOffer> => batchGate(app, site);
      const payer = newWallet();
      await fundUsdc(app, payer.address, '1');
      const first = await gate();
      const channel = testChannel(app, payer, first.accepted);
      const paid = await app.call('POST', `/v1/gates/${first.id}/verify`, {
        body: { payment: await channel.payment(first, PRICE, { deposit: 50_000n }) },
      });
      expect(paid.status).toBe(200);
      const channelId = channel.channelId as Hex;
      return {
        app,
        payTo,
        channel,
        askRefund: async (on: TestApp) => {
          const offer = await gate();
          const voucher = await channel.payment(offer, PRICE);
          return on.call('POST', `/v1/gates/${offer.id}/verify`, {
            body: { payment: { ...voucher, payload: { ...voucher.payload, type: 'refund' } } },
          });
        },
        /** The escrow's [balance, totalClaimed] of the channel. */
        escrowChannel: () => escrowRead<readonly [bigint, bigint]>(app, 'channels', channelId),
        refundNonce: (blockNumber: bigint) => escrowRead<bigint>(app, 'refundNonce', channelId, blockNumber),
        hold: async () => (await app.app.get(ChannelStore).refundRecord(channelId))?.hold ?? null,
        row: () => app.database.prisma.paymentChannel.findUniqueOrThrow({ where: { channelId } }),
      };
    } catch (error) {
      await app.close();
      throw error;
    }
  }
});
