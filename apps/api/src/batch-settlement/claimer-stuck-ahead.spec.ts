import { randomBytes } from 'node:crypto';
import { devTestClient } from '@crawlgate/devchain';
import type { Hash } from 'viem';
import { batchSettlementSite, openGate } from '../../test/fixtures';
import { fundEth, fundUsdc, newWallet, signPayment } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { batchGate, startWithdrawal, testChannel } from '../../test/test-channel';
import { endFeeSpike, GWEI, ROUTINE_FEE_CAP, signedTransactionOf, URGENT_FEE_CAP } from '../../test/test-chain';
import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { loadConfig } from '../config/config';
import { ReconcilerService } from '../payments/reconciler.service';
import { ClaimerService } from './claimer.service';

/**
 * Review finding 1 (helper-386): an urgent claim is sent at the relayer's next nonce, behind any
 * relayer transaction still pending. One of another kind (here an `exact` settlement) stuck under a
 * fee spike above RELAYER_MAX_FEE_PER_GAS_WEI, which its own re-pricing never passes, held the
 * urgent claim behind its nonce however high the claim's own fees: the payer could finalize its
 * withdrawal meanwhile and take back what it was charged. On the worker's anvil, automine off.
 */
describe('an urgent claim behind a stuck relayer transaction of another kind', () => {
  let db: TestDatabase;
  let app: TestApp;
  /** Requests answer once broadcast; the claimer re-prices what is stuck at once. */
  let claiming: TestApp;
  const PRICE = 10_000n;
  const DEPOSIT = 50_000n;
  /** One for both instances: each opens the other's sites' gates. */
  const masterKey = randomBytes(32);

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startTestApp({ database: db.database, masterKey, isolateChain: true });
    const { feeBump, batchSettlement } = loadConfig({}).chain;
    claiming = await startTestApp({
      database: db.database,
      masterKey,
      config: {
        chain: {
          settlementTimeoutMs: 0,
          // A page at stake makes a claim urgent (claimIsUrgent: at least CLAIM_MIN_MICROS).
          batchSettlement: { ...batchSettlement, claimIntervalMs: 0, claimMinMicros: PRICE },
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
  afterEach(() => endFeeSpike(app.chain));

  const test = () => devTestClient(app.chain.rpcUrl);
  const transaction = (hash: string) => app.chain.publicClient.getTransaction({ hash: hash as Hash });
  const receipt = (hash: string) =>
    app.chain.publicClient.getTransactionReceipt({ hash: hash as Hash }).catch(() => null);
  const verify = (on: TestApp, gateId: string, payment: unknown) =>
    on.call('POST', `/v1/gates/${gateId}/verify`, { body: { payment } });
  /** A run's time once a withdrawal started now is within half of its delay of its deadline: its claim is urgent. */
  const late = () => new Date(Date.now() + (loadConfig({}).chain.batchSettlement.withdrawDelaySeconds * 1000 * 3) / 4);

  /** A payer whose channel on `site` holds DEPOSIT, charged a page, withdrawing it all: its claim is urgent once late. */
  async function withdrawingChannel(site: Awaited<ReturnType<typeof batchSettlementSite>>['site']) {
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    await fundEth(app, payer.address);
    const offer = await batchGate(app, site);
    const channel = testChannel(app, payer, offer.accepted);
    expect((await verify(app, offer.id, await channel.payment(offer, PRICE, { deposit: DEPOSIT }))).status).toBe(200);
    await startWithdrawal(app, payer, channel.config, DEPOSIT);
    return channel;
  }

  /**
   * An `exact` payment's settlement stuck at the normal maximum: broadcast at a calm chain's fees,
   * re-priced by the reconciler up to RELAYER_MAX_FEE_PER_GAS_WEI under a spike, a block mined at 9
   * gwei (the relayer's next transaction is priced from it: 11.8 gwei, above that maximum), and the
   * next block's base fee raised to 11 gwei, which leaves it out. Anvil drops a transaction its block's
   * base fee leaves out, and refuses one under the next block's (geth keeps both waiting): it is out of
   * the pool while that block is mined, then broadcast again (same hash), before the rise.
   */
  async function stuckAtTheMaximum(site: Awaited<ReturnType<typeof batchSettlementSite>>['site']) {
    const agent = newWallet();
    await fundUsdc(app, agent.address, '1');
    await test().setAutomine(false);
    const gate = await openGate(claiming, site, `/stuck/${agent.address}`);
    const sent = await verify(claiming, gate.id, await signPayment(claiming, agent, gate));
    expect(sent.status).toBe(202);
    await test().setNextBlockBaseFeePerGas({ baseFeePerGas: 9n * GWEI });
    await claiming.app.get(ReconcilerService).runOnce();
    const { txHash } = await app.database.prisma.payment.findUniqueOrThrow({ where: { gateId: gate.ref } });
    const stuck = await transaction(txHash!);
    expect(stuck.maxFeePerGas).toBe(ROUTINE_FEE_CAP);
    await test().dropTransaction({ hash: stuck.hash });
    await test().mine({ blocks: 1 });
    await app.chain.publicClient.sendRawTransaction({ serializedTransaction: signedTransactionOf(stuck) });
    await test().setNextBlockBaseFeePerGas({ baseFeePerGas: 11n * GWEI });
    expect((await transaction(stuck.hash)).blockNumber).toBeNull();
    return { gate, stuck, first: sent.body.tx_hash as Hash };
  }

  it('re-prices it up to the urgent maximum once an urgent claim is sent behind it; the claim is then mined, and the replacement settles its payment', async () => {
    const { site } = await batchSettlementSite(app, newWallet().address);
    const channel = await withdrawingChannel(site);
    const { gate, stuck, first } = await stuckAtTheMaximum(site);
    const asked = (await app.chain.publicClient.estimateFeesPerGas()).maxFeePerGas;
    expect(asked).toBeGreaterThan(ROUTINE_FEE_CAP);
    const claimer = claiming.app.get(ClaimerService);

    const run = await claimer.runOnce({ now: late() });

    expect(run.claims).toHaveLength(1);
    expect((await transaction(run.claims[0])).nonce).toBe(stuck.nonce + 1);
    // The settlement ahead of it was sent again at its nonce, above the normal maximum, recorded as its payment's.
    const payment = await app.database.prisma.payment.findUniqueOrThrow({ where: { gateId: gate.ref } });
    expect(payment.replacedTxHashes).toEqual([first, stuck.hash]);
    const replacement = await transaction(payment.txHash!);
    expect(replacement).toMatchObject({ nonce: stuck.nonce, input: stuck.input, blockNumber: null });
    expect(replacement.maxFeePerGas!).toBeGreaterThan(ROUTINE_FEE_CAP);
    expect(replacement.maxFeePerGas!).toBeLessThanOrEqual(URGENT_FEE_CAP);
    // A block at the spike takes both, in nonce order (before: neither, the settlement left out).
    await test().mine({ blocks: 1 });
    expect((await receipt(payment.txHash!))?.status).toBe('success');
    expect((await receipt(run.claims[0]))?.status).toBe('success');
    await test().setAutomine(true);
    await claimer.runOnce({ now: late() });
    const row = await app.database.prisma.paymentChannel.findUniqueOrThrow({ where: { channelId: channel.channelId } });
    expect(row.claimed).toBe(PRICE);
    // The reconciler takes the replacement as the payment's own settlement.
    await app.app.get(ReconcilerService).runOnce();
    expect((await app.call('GET', `/v1/gates/${gate.id}`)).body).toMatchObject({
      status: 'paid',
      tx_hash: payment.txHash,
    });
  }, 90_000);

  it('re-prices it when the urgent claim behind it, sent before it was stuck long enough, is itself re-priced', async () => {
    const { site } = await batchSettlementSite(app, newWallet().address);
    await withdrawingChannel(site);
    const { gate, stuck } = await stuckAtTheMaximum(site);
    // An instance re-pricing only what waited RELAYER_BUMP_AFTER_SECONDS (30 s) sends the urgent claim behind it.
    const { batchSettlement } = loadConfig({}).chain;
    const patient = await startTestApp({
      database: db.database,
      masterKey,
      config: {
        chain: {
          settlementTimeoutMs: 0,
          batchSettlement: { ...batchSettlement, claimIntervalMs: 0, claimMinMicros: PRICE },
        },
      },
    });
    let sent;
    try {
      sent = await patient.app.get(ClaimerService).runOnce({ now: late() });
    } finally {
      await patient.app.close();
    }
    expect(sent.claims).toHaveLength(1);
    const claim = await transaction(sent.claims[0]);
    expect(claim.nonce).toBe(stuck.nonce + 1);
    expect((await app.database.prisma.payment.findUniqueOrThrow({ where: { gateId: gate.ref } })).txHash).toBe(
      stuck.hash,
    );

    // The next run finds the urgent claim on its way: what holds it back goes up to the urgent maximum.
    await claiming.app.get(ClaimerService).runOnce({ now: late() });

    const payment = await app.database.prisma.payment.findUniqueOrThrow({ where: { gateId: gate.ref } });
    expect(payment.txHash).not.toBe(stuck.hash);
    const replacement = await transaction(payment.txHash!);
    expect(replacement.nonce).toBe(stuck.nonce);
    expect(replacement.maxFeePerGas!).toBeGreaterThan(ROUTINE_FEE_CAP);
    await test().mine({ blocks: 1 });
    const mined = await app.chain.publicClient.getTransactionCount({
      address: app.chain.relayer.account.address,
      blockTag: 'latest',
    });
    expect(mined).toBeGreaterThan(claim.nonce); // the claim, or its re-priced copy, is mined
  }, 90_000);

  it('re-prices the hash still pending when its payment names a replacement whose broadcast failed', async () => {
    const { site } = await batchSettlementSite(app, newWallet().address);
    await withdrawingChannel(site);
    const { gate, stuck, first } = await stuckAtTheMaximum(site);
    // What a replacement recorded before its broadcast leaves when the node never took it: the
    // payment names a hash no node knows, and the one it replaced is still the pending one.
    const neverSent = `0x${'ab'.repeat(32)}`;
    await app.database.prisma.payment.update({
      where: { gateId: gate.ref },
      data: { txHash: neverSent, replacedTxHashes: [first, stuck.hash] },
    });

    const run = await claiming.app.get(ClaimerService).runOnce({ now: late() });

    expect(run.claims).toHaveLength(1);
    expect((await transaction(run.claims[0])).nonce).toBe(stuck.nonce + 1);
    const payment = await app.database.prisma.payment.findUniqueOrThrow({ where: { gateId: gate.ref } });
    expect(payment.replacedTxHashes).toEqual([first, stuck.hash, neverSent]);
    const replacement = await transaction(payment.txHash!);
    expect(replacement).toMatchObject({ nonce: stuck.nonce, input: stuck.input });
    expect(replacement.maxFeePerGas!).toBeGreaterThan(ROUTINE_FEE_CAP);
    await test().mine({ blocks: 1 });
    expect((await receipt(payment.txHash!))?.status).toBe('success');
    expect((await receipt(run.claims[0]))?.status).toBe('success');
  }, 90_000);

  it('leaves it at the normal maximum when no urgent claim waits behind it', async () => {
    const { site } = await batchSettlementSite(app, newWallet().address);
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    await fundEth(app, payer.address);
    const offer = await batchGate(app, site);
    const channel = testChannel(app, payer, offer.accepted);
    expect((await verify(app, offer.id, await channel.payment(offer, PRICE, { deposit: DEPOSIT }))).status).toBe(200);
    const { gate, stuck } = await stuckAtTheMaximum(site);

    // A routine claim (no withdrawal): nothing of another kind is lifted for it.
    await claiming.app.get(ClaimerService).runOnce({ force: true, now: late() });

    const payment = await app.database.prisma.payment.findUniqueOrThrow({ where: { gateId: gate.ref } });
    expect(payment.txHash).toBe(stuck.hash);
  }, 90_000);
});
