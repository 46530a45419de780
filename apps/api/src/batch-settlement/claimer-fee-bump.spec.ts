import { devTestClient } from '@crawlgate/devchain';
import type { Hash } from 'viem';
import { pricedSite } from '../../test/fixtures';
import { fundUsdc, newWallet, usdcBalance } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { batchOffer, testChannel } from '../../test/test-channel';
import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { minimumReplacementFee } from '../chain/fee-bump';
import { ClaimerService } from './claimer.service';

/**
 * A claim stuck under a fee spike (automine off, the next block's base fee raised above what it
 * offered, so no block can take it) holds every later relayer transaction behind its nonce: the next run re-prices it.
 */
describe('claims stuck under a fee spike', () => {
  let db: TestDatabase;
  let app: TestApp;
  let claiming: TestApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startTestApp({ database: db.database, isolateChain: true });
    // Its claimer's runs end as soon as they have broadcast (settlementTimeoutMs 0); a stuck claim is re-priced at the next run.
    claiming = await startTestApp({
      database: db.database,
      config: {
        chain: {
          settlementTimeoutMs: 0,
          feeBump: { afterSeconds: 0, maxFeePerGas: 10n ** 12n, urgentMaxFeePerGas: 10n ** 12n },
        },
      },
    });
  });
  afterAll(async () => {
    await test().setAutomine(true);
    await claiming.app.close();
    await app.close();
    await db.dispose();
  });

  const test = () => devTestClient(app.chain.rpcUrl);
  const transaction = (hash: string) => app.chain.publicClient.getTransaction({ hash: hash as Hash });
  const claimsOf = (payTo: string) =>
    app.database.prisma.channelClaim.findMany({
      where: { receiver: payTo.toLowerCase() },
      orderBy: { createdAt: 'asc' },
    });

  it('re-prices the stuck claim at its nonce; the replacement lands, is recorded once, and the settle follows', async () => {
    const payTo = newWallet().address;
    const { site, publisher } = await pricedSite(app, payTo);
    await app.call('PATCH', `/v1/sites/${site.siteId}`, { body: { batch_settlement: true }, headers: publisher.auth });
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    const offer = batchOffer(
      await app.call('POST', '/v1/gates', { body: { url: '/a/1' }, headers: { 'x-site-token': site.siteToken } }),
    );
    const owed = BigInt(offer.accepted.amount);
    const channel = testChannel(app, payer, offer.accepted);
    const paid = await app.call('POST', `/v1/gates/${offer.id}/verify`, {
      body: { payment: await channel.payment(offer, owed, { deposit: 100_000n }) },
    });
    expect(paid.status).toBe(200);
    const claimer = claiming.app.get(ClaimerService);

    let replacedBy: string;
    await test().setAutomine(false);
    try {
      const sent = await claimer.runOnce({ force: true });
      expect(sent.claims).toHaveLength(1);
      const stuck = await transaction(sent.claims[0]);
      await test().setNextBlockBaseFeePerGas({ baseFeePerGas: stuck.maxFeePerGas! * 3n });
      // Not mined now: anvil drops a transaction its block's base fee leaves out (geth keeps it waiting).
      const next = await claiming.chain.publicClient.getBlock({ blockTag: 'pending' });
      expect(next.baseFeePerGas).toBeGreaterThan(stuck.maxFeePerGas!);
      expect((await transaction(sent.claims[0])).blockNumber).toBeNull();

      // The next run finds it on its way and stuck: a copy at its nonce, higher fees, written down and sent.
      expect(await claimer.runOnce()).toMatchObject({ claims: [], settles: [] });
      const [original, copy] = await claimsOf(payTo);
      expect(original).toMatchObject({ txHash: sent.claims[0], nonce: stuck.nonce, landedAt: null });
      expect(copy).toMatchObject({ nonce: stuck.nonce, channels: 1, amount: owed, landedAt: null });
      replacedBy = copy.txHash;
      const replacement = await transaction(copy.txHash);
      expect(replacement).toMatchObject({ nonce: stuck.nonce, input: stuck.input, blockNumber: null });
      expect(replacement.maxFeePerGas).toBeGreaterThanOrEqual(minimumReplacementFee(stuck.maxFeePerGas!));
      await test().mine({ blocks: 1 });
    } finally {
      await test().setAutomine(true);
    }

    // The replacement landed: recorded, the original dropped; the settle is sent, then recorded.
    await claimer.runOnce();
    await claimer.runOnce();
    const claims = await claimsOf(payTo);
    expect(claims).toHaveLength(1);
    expect(claims[0]).toMatchObject({ txHash: replacedBy, landedAt: expect.any(Date) });
    expect(claims[0].settleTxHash).not.toBeNull();
    expect(await usdcBalance(app, payTo)).toBe(owed);
  }, 60_000);
});
