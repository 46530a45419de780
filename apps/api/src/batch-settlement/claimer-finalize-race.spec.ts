import { batchSettlementAbi, devTestClient, devWalletClient } from '@crawlgate/devchain';
import type { Hash } from 'viem';
import { batchSettlementSite } from '../../test/fixtures';
import { fundEth, fundUsdc, newWallet } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { batchGate, startWithdrawal, testChannel } from '../../test/test-channel';
import { GWEI } from '../../test/test-chain';
import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { loadConfig } from '../config/config';
import { ClaimerHeartbeatStore } from './claimer-heartbeat.store';
import { ClaimerService } from './claimer.service';

/**
 * Review finding 3 (helper-386): once a payer's withdrawal may be finalized (its delay is over), the
 * payer can finalize it just before the urgent claim carrying its channel is mined. The escrow
 * claims all or none: the claim reverted for every channel in it, at urgent fees, and the revert
 * failed the run (no heartbeat: vouchers refused everywhere). Channels past their deadline are now
 * claimed one a claim, and such a claim's revert is logged, not the run's failure.
 * On the worker's anvil: chain time moved past the withdraw delay, automine off while the claim waits.
 */
describe('a payer finalizing its withdrawal just before the urgent claim carrying its channel', () => {
  let db: TestDatabase;
  let app: TestApp;
  const PRICE = 10_000n;
  const DEPOSIT = 50_000n;

  beforeAll(async () => {
    db = await createTestDatabase();
    const { batchSettlement } = loadConfig({}).chain;
    // A page at stake makes a claim urgent (claimIsUrgent: at least CLAIM_MIN_MICROS).
    app = await startTestApp({
      database: db.database,
      isolateChain: true,
      config: { chain: { batchSettlement: { ...batchSettlement, claimIntervalMs: 0, claimMinMicros: PRICE } } },
    });
  });
  afterAll(async () => {
    await test().setAutomine(true);
    await app.close();
    await db.dispose();
  });

  const test = () => devTestClient(app.chain.rpcUrl);
  const verify = (gateId: string, payment: unknown) =>
    app.call('POST', `/v1/gates/${gateId}/verify`, { body: { payment } });
  const channelRow = (channelId: string) =>
    app.database.prisma.paymentChannel.findUniqueOrThrow({ where: { channelId } });
  const relayerPending = () =>
    app.chain.publicClient.getTransactionCount({ address: app.chain.relayer.account.address, blockTag: 'pending' });

  async function withdrawingChannel(site: Awaited<ReturnType<typeof batchSettlementSite>>['site']) {
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    await fundEth(app, payer.address);
    const offer = await batchGate(app, site);
    const channel = testChannel(app, payer, offer.accepted);
    expect((await verify(offer.id, await channel.payment(offer, PRICE, { deposit: DEPOSIT }))).status).toBe(200);
    await startWithdrawal(app, payer, channel.config, DEPOSIT);
    return { payer, channel };
  }

  /** Waits until the relayer has a transaction in the pool beyond `count`. */
  async function untilRelayerSends(count: number) {
    for (let i = 0; i < 400 && (await relayerPending()) <= count; i++) await new Promise((r) => setTimeout(r, 25));
    expect(await relayerPending()).toBeGreaterThan(count);
  }

  it('claims the other channel all the same, and the run counts: the front-run claim alone reverts', async () => {
    const { site } = await batchSettlementSite(app, newWallet().address);
    const attacker = await withdrawingChannel(site); // first in its receiver's queue of withdrawing channels
    const other = await withdrawingChannel(site);
    // The withdraw delay is over: either payer may finalize now.
    await test().increaseTime({ seconds: loadConfig({}).chain.batchSettlement.withdrawDelaySeconds + 60 });
    await test().mine({ blocks: 1 });
    const now = new Date(Number((await app.chain.publicClient.getBlock()).timestamp) * 1000);

    await test().setAutomine(false);
    const runStarted = performance.now();
    const before = await relayerPending();
    const running = app.app.get(ClaimerService).runOnce({ now });
    // The attacker sees the claim in the pool and finalizes first, tipping more.
    await untilRelayerSends(before);
    const wallet = devWalletClient(app.chain.rpcUrl, app.chain.chainId, attacker.payer);
    const finalize = await wallet.writeContract({
      address: app.chain.batchSettlement!.escrow,
      abi: batchSettlementAbi,
      functionName: 'finalizeWithdraw',
      args: [attacker.channel.config],
      // Its own gas: an estimate on the pending state (after the claim) would leave it short.
      gas: 300_000n,
      maxFeePerGas: 100n * GWEI,
      maxPriorityFeePerGas: 50n * GWEI,
    } as never);
    await test().mine({ blocks: 1 });
    expect((await app.chain.publicClient.getTransactionReceipt({ hash: finalize as Hash })).status).toBe('success');
    await test().setAutomine(true);
    await test().mine({ blocks: 1 });
    const run = await running;

    // The other payer's page is claimed: the attacker's revert took only its own claim.
    expect((await channelRow(other.channel.channelId)).claimed).toBe(PRICE);
    const statuses = await Promise.all(
      run.claims.map(async (hash) => (await app.chain.publicClient.getTransactionReceipt({ hash })).status),
    );
    expect(statuses).toEqual(['reverted', 'success']);
    // The run went through (its heartbeat: vouchers are still taken).
    expect((await app.app.get(ClaimerHeartbeatStore).last())!.ageMs).toBeLessThan(performance.now() - runStarted);
    // The attacker's channel holds nothing more to claim: no claim of it is sent again.
    expect((await app.app.get(ClaimerService).runOnce({ now })).claims).toEqual([]);
  }, 90_000);
});
