import { devTestClient } from '@crawlgate/devchain';
import { batchSettlementSite } from '../../test/fixtures';
import { fundEth, fundUsdc, newWallet } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { batchGate, startWithdrawal, testChannel } from '../../test/test-channel';
import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { loadConfig } from '../config/config';
import { ClaimerService } from './claimer.service';

/**
 * A channel whose pending withdrawal is past its delay is claimed alone only when finalizing that
 * withdrawal could make its claim revert (it would take charged money). A payer who starts a
 * withdrawal of 1 unit and never finalizes it keeps its channel finalizable for good, though
 * finalizing could never revert its claim (the voucher total is within the balance less the
 * withdrawal): claimed alone, every page on it would cost the relayer a claim transaction of its own
 * (and a receipt wait inside the run), where a receiver's channels go CLAIM_MAX_CHANNELS to a claim.
 */
describe('channels with a 1-unit withdrawal past its delay, never finalized', () => {
  let db: TestDatabase;
  let app: TestApp;
  const PRICE = 10_000n;
  const DEPOSIT = 50_000n;
  const CHANNELS = 3;

  beforeAll(async () => {
    db = await createTestDatabase();
    const { batchSettlement } = loadConfig({}).chain;
    app = await startTestApp({
      database: db.database,
      isolateChain: true,
      config: { chain: { batchSettlement: { ...batchSettlement, claimIntervalMs: 0 } } },
    });
  });
  afterAll(async () => {
    await app.close();
    await db.dispose();
  });

  const test = () => devTestClient(app.chain.rpcUrl);
  const verify = (gateId: string, payment: unknown) =>
    app.call('POST', `/v1/gates/${gateId}/verify`, { body: { payment } });

  it('are claimed in one claimWithSignature per receiver, as any routine channels are', async () => {
    const { site } = await batchSettlementSite(app, newWallet().address);
    const channels: ReturnType<typeof testChannel>[] = [];
    for (let i = 0; i < CHANNELS; i++) {
      const payer = newWallet();
      await fundUsdc(app, payer.address, '1');
      await fundEth(app, payer.address);
      const offer = await batchGate(app, site);
      const channel = testChannel(app, payer, offer.accepted);
      expect((await verify(offer.id, await channel.payment(offer, PRICE, { deposit: DEPOSIT }))).status).toBe(200);
      // Takes none of what was charged: finalizing it can never make a claim of PRICE revert.
      await startWithdrawal(app, payer, channel.config, 1n);
      channels.push(channel);
    }
    await test().increaseTime({ seconds: loadConfig({}).chain.batchSettlement.withdrawDelaySeconds + 60 });
    await test().mine({ blocks: 1 });
    // The pages are overdue by then (a quarter delay old): due at routine fees.
    const now = new Date(Number((await app.chain.publicClient.getBlock()).timestamp) * 1000);

    const claimer = app.app.get(ClaimerService);
    const first = await claimer.runOnce({ now });

    // For good: the withdrawal is never finalized; each new page on the channels is batched again.
    for (const channel of channels) {
      const offer = await batchGate(app, site);
      expect((await verify(offer.id, await channel.payment(offer, 2n * PRICE))).status).toBe(200);
    }
    await test().increaseTime({ seconds: loadConfig({}).chain.batchSettlement.withdrawDelaySeconds });
    await test().mine({ blocks: 1 });
    const later = new Date(Number((await app.chain.publicClient.getBlock()).timestamp) * 1000);
    const second = await claimer.runOnce({ now: later });

    expect([first.claims.length, second.claims.length]).toEqual([1, 1]);
  }, 90_000);
});
