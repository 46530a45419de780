import { Logger } from '@nestjs/common';
import { devTestClient } from '@crawlgate/devchain';
import { batchSettlementSite, openGate, pricedSite, type TestSite } from '../../test/fixtures';
import { fundUsdc, newWallet, signPayment, usdcBalance } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { batchGate, testChannel, type BatchOffer } from '../../test/test-channel';
import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { ClaimerService } from '../batch-settlement/claimer.service';
import { toSignedAuthorization } from './authorization-checks';
import { serializeAuthorization } from './payments.service';
import { ReconcilerService } from './reconciler.service';
import { endFeeSpike } from '../../test/test-chain';

/**
 * A fee spike past RELAYER_MAX_FEE_PER_GAS_WEI (10 gwei by default) when a relayer transaction is
 * first sent, on the worker's anvil: the chain's latest base fee raised to 100 gwei, so a new
 * transaction would offer more than the cap. Nothing is signed: a request is answered 503 with
 * nothing charged and its gate or channel as it was; a background job sends nothing and says why.
 */
describe('relayer transactions first sent while the chain asks more than the maximum fee', () => {
  let db: TestDatabase;
  let app: TestApp;
  const CAP = 10_000_000_000n; // the default RELAYER_MAX_FEE_PER_GAS_WEI

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startTestApp({ database: db.database, isolateChain: true });
    expect(app.config.chain.feeBump.maxFeePerGas).toBe(CAP);
  });
  afterAll(async () => {
    await app.close();
    await db.dispose();
  });
  // The fees fall again after each test: the next block's base fee at 1 wei.
  afterEach(() => endFeeSpike(app.chain));

  const test = () => devTestClient(app.chain.rpcUrl);
  const nextBaseFee = (wei: bigint) => test().setNextBlockBaseFeePerGas({ baseFeePerGas: wei });
  const relayerNonce = () =>
    app.chain.publicClient.getTransactionCount({ address: app.chain.relayer.account.address, blockTag: 'pending' });
  const verify = (gateId: string, payment: unknown) =>
    app.call('POST', `/v1/gates/${gateId}/verify`, { body: { payment } });

  /** A block mined at 100 gwei a gas: what a transaction sent now would be priced from, well above the cap. */
  async function spike() {
    await nextBaseFee(100_000_000_000n);
    await test().mine({ blocks: 1 });
    const fees = await app.chain.publicClient.estimateFeesPerGas();
    expect(fees.maxFeePerGas).toBeGreaterThan(CAP);
  }

  /** A 503 that names the cap: nothing was sent, so the same payment is safe to send again. */
  function expectRefusedForFees(answer: { status: number; body: { detail?: string } }) {
    expect(answer.status).toBe(503);
    expect(answer.body.detail).toMatch(/RELAYER_MAX_FEE_PER_GAS_WEI/);
    expect(answer.body.detail).toMatch(/settled nothing/);
  }

  /** A gate at `path` of a fresh site priced to pay `payTo`, and a payer holding 1 USDC. */
  async function payerAndGate(path: string) {
    const payTo = newWallet().address;
    const { site } = await pricedSite(app, payTo);
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    return { site, payTo, payer, gate: await openGate(app, site, path) };
  }

  it('sends no exact settlement: 503, nothing charged, and the gate is paid by the same payment once fees fall', async () => {
    const { payer, gate } = await payerAndGate('/spike/exact');
    const payment = await signPayment(app, payer, gate);
    await spike();
    const nonce = await relayerNonce();

    expectRefusedForFees(await verify(gate.id, payment));
    expect(await relayerNonce()).toBe(nonce);
    expect(await usdcBalance(app, payer.address)).toBe(1_000_000n);
    // No claim is left on the gate: it is payable, by this very payment.
    expect(await app.database.prisma.payment.findUnique({ where: { gateId: gate.ref } })).toBeNull();
    expect((await app.call('GET', `/v1/gates/${gate.id}`)).body.status).toBe('open');

    await nextBaseFee(1n);
    await test().mine({ blocks: 1 });
    const paid = await verify(gate.id, payment);
    expect(paid.status).toBe(200);
    expect(await usdcBalance(app, payer.address)).toBe(1_000_000n - BigInt(gate.amount));
  }, 60_000);

  it('has the reconciler send no settlement of a claim its request never sent, and say why; it sends it once fees fall', async () => {
    const { site, payTo, payer, gate } = await payerAndGate('/spike/reconciled');
    const auth = toSignedAuthorization((await signPayment(app, payer, gate)).payload as never);
    // Claimed a minute ago by a request that died before its broadcast: the reconciler's to send.
    await app.database.prisma.payment.create({
      data: {
        gateId: gate.ref,
        siteId: site.siteId,
        publisherId: (await app.database.prisma.site.findUniqueOrThrow({ where: { id: site.siteId } })).publisherId,
        url: '/spike/reconciled',
        method: 'authorization',
        status: 'submitting',
        chainId: app.chain.chainId,
        asset: app.chain.usdc,
        payer: payer.address.toLowerCase(),
        payTo: payTo.toLowerCase(),
        amount: BigInt(gate.amount),
        nonce: auth.nonce,
        authorization: serializeAuthorization(auth),
        createdAt: new Date(Date.now() - 60_000),
      },
    });
    const reconciler = app.app.get(ReconcilerService);
    await spike();
    const nonce = await relayerNonce();
    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      expect(await reconciler.runOnce()).toMatchObject({ resubmitted: 0, released: 0, waiting: 1 });
      expect(warn).toHaveBeenCalledWith(expect.stringMatching(/stays open.*RELAYER_MAX_FEE_PER_GAS_WEI/));
    } finally {
      warn.mockRestore();
    }
    expect(await relayerNonce()).toBe(nonce);
    expect(await app.database.prisma.payment.findUniqueOrThrow({ where: { gateId: gate.ref } })).toMatchObject({
      status: 'submitting',
      txHash: null,
    });
    expect(await usdcBalance(app, payer.address)).toBe(1_000_000n);

    await nextBaseFee(1n);
    await test().mine({ blocks: 1 });
    expect(await reconciler.runOnce()).toMatchObject({ resubmitted: 1 });
  }, 60_000);

  describe('batch settlement', () => {
    let site: TestSite;
    const payTo = newWallet().address;
    const PRICE = 10_000n; // the site's default 0.01 USD
    beforeAll(async () => {
      ({ site } = await batchSettlementSite(app, payTo));
    });

    /** A payer whose channel holds 50,000 and paid one page. */
    async function paidChannel() {
      const payer = newWallet();
      await fundUsdc(app, payer.address, '1');
      const first = await batchGate(app, site);
      const channel = testChannel(app, payer, first.accepted);
      expect((await verify(first.id, await channel.payment(first, PRICE, { deposit: 50_000n }))).status).toBe(200);
      return { payer, channel };
    }

    it('sends no deposit: 503, nothing deposited or taken, and the same payment goes through once fees fall', async () => {
      const payer = newWallet();
      await fundUsdc(app, payer.address, '1');
      const offer: BatchOffer = await batchGate(app, site);
      const channel = testChannel(app, payer, offer.accepted);
      const payment = await channel.payment(offer, PRICE, { deposit: 50_000n });
      await spike();
      const nonce = await relayerNonce();

      expectRefusedForFees(await verify(offer.id, payment));
      expect(await relayerNonce()).toBe(nonce);
      expect(await usdcBalance(app, payer.address)).toBe(1_000_000n);
      expect((await app.call('GET', `/v1/gates/${offer.id}`)).body.status).toBe('open');

      await nextBaseFee(1n);
      await test().mine({ blocks: 1 });
      expect((await verify(offer.id, payment)).status).toBe(200);
      expect(await usdcBalance(app, payer.address)).toBe(1_000_000n - 50_000n);
    }, 60_000);

    it('sends no refund: 503, the channel not held and its funds where they were', async () => {
      const { payer, channel } = await paidChannel();
      const offer = await batchGate(app, site);
      const voucher = await channel.payment(offer, PRICE);
      const refund = { ...voucher, payload: { ...voucher.payload, type: 'refund' } };
      await spike();
      const nonce = await relayerNonce();

      expectRefusedForFees(await verify(offer.id, refund));
      expect(await relayerNonce()).toBe(nonce);
      expect(await usdcBalance(app, payer.address)).toBe(1_000_000n - 50_000n);
      const row = await app.database.prisma.paymentChannel.findUniqueOrThrow({
        where: { channelId: channel.channelId },
      });
      // Nor is its voucher marked public (as a claim's calldata would make it): it can still ask for the refund.
      expect(row).toMatchObject({ refundId: null, refundTx: null, refundedCharged: null, published: 0n });

      // Once fees fall, the same refund goes through.
      await nextBaseFee(1n);
      await test().mine({ blocks: 1 });
      const refunded = await verify(offer.id, refund);
      expect(refunded.body).toMatchObject({ status: 'refunded', refund_amount: '40000' });
    }, 60_000);

    it('has the claimer send no claim, and say why; the next run after fees fall claims', async () => {
      const { channel } = await paidChannel();
      const claimer = app.app.get(ClaimerService);
      await spike();
      const nonce = await relayerNonce();
      const warn = jest.spyOn(Logger.prototype, 'warn');
      try {
        expect(await claimer.runOnce({ force: true })).toMatchObject({ claims: [], settles: [] });
        expect(warn).toHaveBeenCalledWith(expect.stringMatching(/RELAYER_MAX_FEE_PER_GAS_WEI/));
      } finally {
        warn.mockRestore();
      }
      expect(await relayerNonce()).toBe(nonce);
      expect(await app.database.prisma.channelClaim.count({ where: { receiver: payTo.toLowerCase() } })).toBe(0);

      await nextBaseFee(1n);
      await test().mine({ blocks: 1 });
      expect((await claimer.runOnce({ force: true })).claims.length).toBeGreaterThan(0);
      const row = await app.database.prisma.paymentChannel.findUniqueOrThrow({
        where: { channelId: channel.channelId },
      });
      expect(row.claimed).toBe(PRICE);
    }, 60_000);
  });
});
