import { BATCH_REASONS, parseBatchSettlementPayment } from '@crawlgate/core';
import { devTestClient, revert, snapshot } from '@crawlgate/devchain';
import { batchSettlementSite, type TestSite } from '../../test/fixtures';
import { fundEth, fundUsdc, newWallet, walletOf } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { batchOffer, testChannel, type BatchOffer } from '../../test/test-channel';
import { depositCalldata } from '../chain/escrow';
import { loadConfig } from '../config/config';

/*
 * A voucher is judged against what the channel holds at the configured confirmation depth, as a
 * tx-hash proof is: a deposit the payer sent to the escrow itself pays no page while a reorg can
 * still take it back.
 */
describe('voucher payments against a deposit still confirming (CONFIRMATIONS=2)', () => {
  let app: TestApp;
  let site: TestSite;
  const payTo = newWallet().address;
  const PRICE = 10_000n; // the site's default 0.01 USD

  beforeAll(async () => {
    // The claimer runs (every minute, so never during these tests): vouchers may then reuse a channel state read a moment ago.
    const batchSettlement = { ...loadConfig({}).chain.batchSettlement, claimIntervalMs: 60_000 };
    app = await startTestApp({ isolateChain: true, config: { chain: { confirmations: 2, batchSettlement } } });
    ({ site } = await batchSettlementSite(app, payTo));
  }, 60_000);
  afterAll(() => app?.close(), 60_000);

  const gate = async (): Promise<BatchOffer> =>
    batchOffer(
      await app.call('POST', '/v1/gates', {
        body: { url: `/article/${Math.random().toString(36).slice(2)}` },
        headers: { 'x-site-token': site.siteToken },
      }),
    );
  const verify = (offer: BatchOffer, payment: unknown) =>
    app.call('POST', `/v1/gates/${offer.id}/verify`, { body: { payment } });
  const paymentsOf = (channelId: string) => app.database.prisma.payment.findMany({ where: { channelId } });

  /** The payer's own deposit transaction into the escrow (not through the API), signed as x402's client signs one. */
  async function depositItself(
    channel: ReturnType<typeof testChannel>,
    offer: BatchOffer,
    payer: ReturnType<typeof newWallet>,
    { amount = 50_000n, salt = 7n } = {},
  ) {
    const parsed = parseBatchSettlementPayment(await channel.payment(offer, PRICE, { deposit: amount, salt }));
    if (!parsed.ok || !parsed.payment.deposit) throw new Error('not a deposit payment');
    const batch = app.chain.batchSettlement!;
    const wallet = walletOf(app, payer);
    const hash = await wallet.sendTransaction({
      to: batch.escrow,
      data: depositCalldata(batch, parsed.payment.channelConfig, amount, parsed.payment.deposit.erc3009),
    });
    const receipt = await app.chain.publicClient.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('success');
    return receipt.blockNumber;
  }
  const mineOneBlock = () => devTestClient(app.chain.rpcUrl).mine({ blocks: 1 });

  /** A payer with USDC and gas, and its channel for this site. */
  async function newPayer() {
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    await fundEth(app, payer.address);
    const offer = await gate();
    return { payer, offer, channel: testChannel(app, payer, offer.accepted) };
  }

  it('takes no voucher against a deposit with one confirmation, nor after a reorg took it; takes it at two confirmations', async () => {
    const { payer, offer, channel } = await newPayer();
    const voucherOnly = await channel.payment(offer, PRICE);

    const beforeDeposit = await snapshot(app.chain.rpcUrl);
    const depositBlock = await depositItself(channel, offer, payer);
    expect(await app.chain.publicClient.getBlockNumber({ cacheTime: 0 })).toBe(depositBlock); // one confirmation

    const early = await verify(offer, voucherOnly);
    expect([early.status, early.body.reason]).toEqual([402, BATCH_REASONS.channelNotFound]);
    expect(early.body.access_token).toBeUndefined();
    expect(await paymentsOf(channel.channelId)).toEqual([]);

    // The reorg: the deposit's block is gone, and with it the deposit.
    await revert(app.chain.rpcUrl, beforeDeposit);
    const afterReorg = await verify(offer, voucherOnly);
    expect([afterReorg.status, afterReorg.body.reason]).toEqual([402, BATCH_REASONS.channelNotFound]);
    expect(await paymentsOf(channel.channelId)).toEqual([]);
    const row = await app.database.prisma.paymentChannel.findUnique({ where: { channelId: channel.channelId } });
    expect(row?.charged ?? 0n).toBe(0n);

    // The deposit lands again and gets its second confirmation: the same voucher pays the gate.
    await depositItself(channel, offer, payer);
    await mineOneBlock();
    const paid = await verify(offer, voucherOnly);
    expect(paid.status).toBe(200);
    expect(paid.body.access_token).toEqual(expect.any(String));
    expect(paid.body.batch_settlement).toMatchObject({
      channel_id: channel.channelId,
      charged_amount: String(PRICE),
      channel_state: { balance: '50000', chargedCumulativeAmount: String(PRICE) },
    });
    const confirmed = await paymentsOf(channel.channelId);
    expect(confirmed.map((payment) => payment.status)).toEqual(['confirmed']);
  });

  it('remembers only confirmed states for the vouchers that follow: a later deposit counts once confirmed, within the reuse window too', async () => {
    const { payer, offer, channel } = await newPayer();
    await depositItself(channel, offer, payer, { amount: 2n * PRICE, salt: 1n });
    await mineOneBlock();
    const page = async (total: bigint) => {
      const next = await gate();
      return verify(next, await channel.payment(next, total));
    };
    expect((await page(PRICE)).status).toBe(200); // a confirmed balance of two pages, remembered
    await depositItself(channel, offer, payer, { amount: 5n * PRICE, salt: 2n }); // one confirmation
    const reads = jest.spyOn(app.chain.publicClient, 'call');
    try {
      expect((await page(2n * PRICE)).status).toBe(200); // within the confirmed balance
      expect(reads).not.toHaveBeenCalled(); // judged on the state remembered from the page before
    } finally {
      reads.mockRestore();
    }
    const beyond = await page(3n * PRICE);
    expect([beyond.status, beyond.body.reason]).toEqual([402, BATCH_REASONS.cumulativeExceedsBalance]);
    expect(beyond.body.access_token).toBeUndefined();
    const again = await page(3n * PRICE);
    expect([again.status, again.body.reason]).toEqual([402, BATCH_REASONS.cumulativeExceedsBalance]);
    expect((await paymentsOf(channel.channelId)).length).toBe(2);
    await mineOneBlock();
    const paid = await page(3n * PRICE);
    expect(paid.status).toBe(200);
    expect(paid.body.batch_settlement.channel_state).toMatchObject({ balance: String(7n * PRICE) });
  });
});
