import { Logger } from '@nestjs/common';
import { batchSettlementAbi, devTestClient, devWalletClient } from '@crawlgate/devchain';
import { keccak256, parseTransaction, type Hash, type Hex } from 'viem';
import { batchSettlementSite } from '../../test/fixtures';
import { fundEth, fundUsdc, newWallet } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { batchGate, testChannel } from '../../test/test-channel';
import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { loadConfig } from '../config/config';
import { ClaimerService } from './claimer.service';
import { endFeeSpike, GWEI, ROUTINE_FEE_CAP, signedTransactionOf } from '../../test/test-chain';

/**
 * Review finding (helper rev383): urgency is per receiver, not per transaction, and knows neither
 * the money at stake nor how far the deadline is. One payer of a receiver, charged one unclaimed
 * page, starts a withdrawal of its deposit: every claim or settle of that receiver stuck ahead is
 * re-priced past RELAYER_MAX_FEE_PER_GAS_WEI (up to the urgent bound), here a routine claim that
 * carries only another payer's channel, with no withdrawal at all. A claim of CLAIM_MAX_CHANNELS
 * (100) channels is re-priced the same way for one page at stake, and at once, a whole withdraw
 * delay ahead of the deadline.
 *
 * Expected (what the test asserts): a claim carrying no threatened channel stays at the normal
 * maximum. It fails on f0d24d7: the replacement offers more than RELAYER_MAX_FEE_PER_GAS_WEI.
 */
describe('one small withdrawal re-prices every stuck claim of its receiver to urgent fees', () => {
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
      config: { chain: { settlementTimeoutMs: 0, feeBump: { ...feeBump, afterSeconds: 0 } } },
    });
  });
  afterAll(async () => {
    await endFeeSpike(app.chain);
    await claiming.app.close();
    await app.close();
    await db.dispose();
  });

  const test = () => devTestClient(app.chain.rpcUrl);
  const nextBaseFee = (wei: bigint) => test().setNextBlockBaseFeePerGas({ baseFeePerGas: wei });
  const transaction = (hash: string) => app.chain.publicClient.getTransaction({ hash: hash as Hash });
  const verify = (gateId: string, payment: unknown) =>
    app.call('POST', `/v1/gates/${gateId}/verify`, { body: { payment } });

  it('re-prices a stuck claim of an unthreatened channel past the normal maximum when another payer withdraws', async () => {
    const { site } = await batchSettlementSite(app, newWallet().address);
    const payerOf = async () => {
      const payer = newWallet();
      await fundUsdc(app, payer.address, '1');
      await fundEth(app, payer.address);
      return payer;
    };
    // The attacker: a channel with one page, claimed and settled (nothing unclaimed).
    const attacker = await payerOf();
    const offer = await batchGate(app, site);
    const attackerChannel = testChannel(app, attacker, offer.accepted);
    expect((await verify(offer.id, await attackerChannel.payment(offer, PRICE, { deposit: DEPOSIT }))).status).toBe(
      200,
    );
    await app.app.get(ClaimerService).runOnce({ force: true });
    // A victim payer of the same receiver: one page, its claim sent at low fees and stuck.
    const victim = await payerOf();
    const victimOffer = await batchGate(app, site);
    const victimChannel = testChannel(app, victim, victimOffer.accepted);
    expect(
      (await verify(victimOffer.id, await victimChannel.payment(victimOffer, PRICE, { deposit: DEPOSIT }))).status,
    ).toBe(200);
    await test().setAutomine(false);
    const claimer = claiming.app.get(ClaimerService);
    const sent = await claimer.runOnce({ force: true });
    expect(sent.claims).toHaveLength(1);
    const stuck = await transaction(sent.claims[0]);
    expect(stuck.maxFeePerGas!).toBeLessThan(ROUTINE_FEE_CAP);

    // Anvil drops a pending transaction priced under a mined block's base fee: the stuck claim is
    // taken out of its pool while the attacker's withdrawal is mined, then broadcast again (same hash).
    const raw = signedTransactionOf(stuck);
    expect(keccak256(raw)).toBe(sent.claims[0]);
    await test().dropTransaction({ hash: sent.claims[0] });

    // The attacker pays one more page (a voucher: nothing sent) and starts withdrawing the rest.
    const page2 = await batchGate(app, site);
    expect((await verify(page2.id, await attackerChannel.payment(page2, 2n * PRICE))).status).toBe(200);
    const wallet = devWalletClient(app.chain.rpcUrl, app.chain.chainId, attacker);
    const withdraw = await wallet.writeContract({
      address: app.chain.batchSettlement!.escrow,
      abi: batchSettlementAbi,
      functionName: 'initiateWithdraw',
      args: [attackerChannel.config, DEPOSIT - PRICE],
    } as never);
    await test().mine({ blocks: 1 });
    expect((await app.chain.publicClient.getTransactionReceipt({ hash: withdraw })).status).toBe('success');
    await app.chain.publicClient.sendRawTransaction({ serializedTransaction: raw });
    expect((await transaction(sent.claims[0])).blockNumber).toBeNull();
    await nextBaseFee(30n * GWEI); // a spike: the stuck claim cannot be mined

    const log = jest.spyOn(Logger.prototype, 'log');
    const warn = jest.spyOn(Logger.prototype, 'warn');
    let said: string[];
    try {
      await claimer.runOnce();
      said = [...log.mock.calls, ...warn.mock.calls].map(([m]) => String(m));
    } finally {
      log.mockRestore();
      warn.mockRestore();
    }
    const claims = await app.database.prisma.channelClaim.findMany({
      where: { receiver: victimChannel.config.receiver.toLowerCase() },
      orderBy: { createdAt: 'asc' },
    });
    const replacement = claims.find((c) => c.nonce === stuck.nonce && c.txHash !== sent.claims[0]);
    // The stuck claim carries only the victim's channel: nothing threatens it.
    if (replacement) {
      // What the claimer offered: re-priced "at N wei per gas", or, when the node refused it (under
      // the next block's base fee), the signed replacement in the broadcast's failure.
      const replaced = said.map((m) => /replaced by .* at (\d+) wei per gas/.exec(m)?.[1]).find(Boolean);
      const refusedRaw = said
        .map((m) => /"eth_sendRawTransaction","params":\["(0x[0-9a-f]+)"/.exec(m)?.[1])
        .find(Boolean);
      const signed = refusedRaw ? parseTransaction(refusedRaw as Hex) : undefined;
      const offered = replaced ? BigInt(replaced) : (signed as { maxFeePerGas?: bigint } | undefined)?.maxFeePerGas;
      expect(offered).toBeDefined();
      expect(offered!).toBeLessThanOrEqual(ROUTINE_FEE_CAP);
      if (signed) expect(signed.data).toBe(stuck.input);
    }
  }, 90_000);
});
