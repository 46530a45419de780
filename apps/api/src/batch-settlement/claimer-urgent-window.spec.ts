import { Logger } from '@nestjs/common';
import { batchSettlementAbi, devTestClient } from '@crawlgate/devchain';
import { decodeFunctionData, keccak256, parseTransaction, type Hash, type Hex } from 'viem';
import { batchSettlementSite } from '../../test/fixtures';
import { fundEth, fundUsdc, newWallet } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { batchGate, startWithdrawal, testChannel } from '../../test/test-channel';
import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { loadConfig } from '../config/config';
import { ClaimerService } from './claimer.service';
import { endFeeSpike, GWEI, ROUTINE_FEE_CAP, signedTransactionOf, URGENT_FEE_CAP } from '../../test/test-chain';

/**
 * Review finding (helper rev383): a stuck claim is re-priced as urgent (urgencyOf) only while its
 * channel's WithdrawInitiated event is within the claimer's log window (RECENT_LOG_BLOCKS, 10,000
 * blocks: about 5.5 hours on Base, under the default 24-hour withdraw delay). Past it, the urgent
 * claim itself, still stuck with the withdrawal pending and the charged money unclaimed, is re-priced
 * only up to RELAYER_MAX_FEE_PER_GAS_WEI. Here RECENT_LOG_BLOCKS is 10 and 12 blocks pass.
 * Expected: re-priced above the normal maximum, as while the event was recent. Fails on f0d24d7.
 */
describe('a stuck urgent claim once its withdrawal event left the log window', () => {
  let db: TestDatabase;
  let app: TestApp;
  let claiming: TestApp;
  const PRICE = 10_000n;
  const DEPOSIT = 50_000n;

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startTestApp({ database: db.database, isolateChain: true });
    const { feeBump } = loadConfig({}).chain;
    claiming = await startTestApp({
      database: db.database,
      config: {
        chain: {
          settlementTimeoutMs: 0,
          recentLogBlocks: 10,
          batchSettlement: claimerSettings(),
          feeBump: { ...feeBump, afterSeconds: 0 },
        },
      },
    });
  });
  afterAll(async () => {
    await endFeeSpike(app.chain);
    await claiming.app.close();
    await app.close();
    await db.dispose();
  });

  // The page at stake is worth an urgent claim (claimIsUrgent: at least CLAIM_MIN_MICROS); a claim takes one channel.
  const claimerSettings = () => ({
    ...loadConfig({}).chain.batchSettlement,
    claimIntervalMs: 0,
    claimMinMicros: PRICE,
    claimMaxChannels: 1,
  });
  const test = () => devTestClient(app.chain.rpcUrl);
  const batchSettlementDelay = () => loadConfig({}).chain.batchSettlement.withdrawDelaySeconds;
  const nextBaseFee = (wei: bigint) => test().setNextBlockBaseFeePerGas({ baseFeePerGas: wei });
  const transaction = (hash: string) => app.chain.publicClient.getTransaction({ hash: hash as Hash });
  const verify = (gateId: string, payment: unknown) =>
    app.call('POST', `/v1/gates/${gateId}/verify`, { body: { payment } });

  it('is re-priced above the normal maximum while the withdrawal still threatens charged money', async () => {
    const { site } = await batchSettlementSite(app, newWallet().address);
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    await fundEth(app, payer.address);
    const offer = await batchGate(app, site);
    const channel = testChannel(app, payer, offer.accepted);
    expect((await verify(offer.id, await channel.payment(offer, PRICE, { deposit: DEPOSIT }))).status).toBe(200);
    await startWithdrawal(app, payer, channel.config, DEPOSIT);

    await test().setAutomine(false);
    const claimer = claiming.app.get(ClaimerService);
    // Runs once the withdrawal is within half of its delay of its deadline (claimIsUrgent).
    const late = new Date(Date.now() + (batchSettlementDelay() * 1000 * 3) / 4);
    const sent = await claimer.runOnce({ now: late });
    expect(sent.claims).toHaveLength(1); // the urgent claim, sent at low fees
    const stuck = await transaction(sent.claims[0]);
    // Blocks pass while it waits (out of anvil's pool meanwhile: anvil drops it when a block's base
    // fee is above its fee; broadcast again after, same hash).
    const raw = signedTransactionOf(stuck);
    expect(keccak256(raw)).toBe(sent.claims[0]);
    await test().dropTransaction({ hash: sent.claims[0] });
    await test().mine({ blocks: 12 });
    await app.chain.publicClient.sendRawTransaction({ serializedTransaction: raw });
    await nextBaseFee(30n * GWEI);

    const log = jest.spyOn(Logger.prototype, 'log');
    const warn = jest.spyOn(Logger.prototype, 'warn');
    let said: string[];
    try {
      await claimer.runOnce({ now: late });
      said = [...log.mock.calls, ...warn.mock.calls].map(([m]) => String(m));
    } finally {
      log.mockRestore();
      warn.mockRestore();
    }
    const claims = await app.database.prisma.channelClaim.findMany({
      where: { receiver: channel.config.receiver.toLowerCase() },
      orderBy: { createdAt: 'asc' },
    });
    // The withdrawal still takes the charged money: the claim is as urgent as it was.
    const state = await app.chain.publicClient.readContract({
      address: app.chain.batchSettlement!.escrow,
      abi: batchSettlementAbi,
      functionName: 'pendingWithdrawals',
      args: [channel.channelId],
    } as never);
    expect((state as readonly [bigint, number])[0]).toBe(DEPOSIT);
    expect(claims).toHaveLength(2);
    // What the claimer says it offered: re-priced "at N wei per gas".
    // or, when the node refused it, the signed replacement in the broadcast's failure.
    const replaced = said.map((m) => /replaced by .* at (\d+) wei per gas/.exec(m)?.[1]).find(Boolean);
    const refusedRaw = said
      .map((m) => /"eth_sendRawTransaction","params":\["(0x[0-9a-f]+)"/.exec(m)?.[1])
      .find(Boolean);
    const offered = replaced
      ? BigInt(replaced)
      : refusedRaw
        ? (parseTransaction(refusedRaw as Hex) as { maxFeePerGas: bigint }).maxFeePerGas
        : 0n;
    expect(offered).toBeGreaterThan(ROUTINE_FEE_CAP); // f0d24d7: exactly ROUTINE_FEE_CAP (10 gwei), the routine maximum
    expect(offered).toBeLessThanOrEqual(URGENT_FEE_CAP);
  }, 90_000);
  it('claims a channel seen withdrawing ahead of the queue, at urgent fees, on a claimer restarted past the log window', async () => {
    await endFeeSpike(app.chain);
    const { site } = await batchSettlementSite(app, newWallet().address);
    const paid = async () => {
      const payer = newWallet();
      await fundUsdc(app, payer.address, '1');
      await fundEth(app, payer.address);
      const offer = await batchGate(app, site);
      const channel = testChannel(app, payer, offer.accepted);
      expect((await verify(offer.id, await channel.payment(offer, PRICE, { deposit: DEPOSIT }))).status).toBe(200);
      return { payer, channel };
    };
    const first = await paid(); // first in the queue, no withdrawal
    const withdrawing = await paid();
    await startWithdrawal(app, withdrawing.payer, withdrawing.channel.config, DEPOSIT);
    const spike = async () => {
      await nextBaseFee(50n * GWEI);
      await test().mine({ blocks: 1 });
    };
    // A claimer sees the withdrawal while its deadline is far: routine, refused under the spike.
    await spike();
    expect(await claiming.app.get(ClaimerService).runOnce()).toMatchObject({ claims: [] });
    await nextBaseFee(1n);
    await test().mine({ blocks: 12 }); // the event leaves the log window (10 blocks)

    // Another instance (or this one restarted): its log read starts inside the window.
    const restarted = await startTestApp({
      database: db.database,
      config: { chain: { recentLogBlocks: 10, batchSettlement: claimerSettings() } },
    });
    try {
      await spike();
      const late = new Date(Date.now() + (batchSettlementDelay() * 1000 * 3) / 4);
      const run = await restarted.app.get(ClaimerService).runOnce({ now: late });
      // The withdrawing channel's claim, urgent, ahead of the one queued before it (refused at routine fees).
      expect(run.claims).toHaveLength(1);
      const tx = await transaction(run.claims[0]);
      expect(tx.maxFeePerGas!).toBeGreaterThan(ROUTINE_FEE_CAP);
      const { args } = decodeFunctionData({ abi: batchSettlementAbi, data: tx.input });
      const payers = (args![0] as readonly { voucher: { channel: { payer: string } } }[]).map((c) =>
        c.voucher.channel.payer.toLowerCase(),
      );
      expect(payers).toEqual([withdrawing.channel.config.payer.toLowerCase()]);
      expect(first.channel.config.payer).not.toBe(withdrawing.channel.config.payer);
    } finally {
      await endFeeSpike(app.chain);
      await restarted.app.close();
    }
  }, 90_000);
});
