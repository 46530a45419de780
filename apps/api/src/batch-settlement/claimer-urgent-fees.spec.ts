import { Logger } from '@nestjs/common';
import { batchSettlementAbi, devTestClient } from '@crawlgate/devchain';
import { decodeFunctionData, type Hash } from 'viem';
import { batchSettlementSite } from '../../test/fixtures';
import { fundEth, fundUsdc, newWallet } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { batchGate, startWithdrawal as startChannelWithdrawal, testChannel } from '../../test/test-channel';
import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { loadConfig } from '../config/config';
import { ClaimerService } from './claimer.service';
import { endFeeSpike, GWEI, ROUTINE_FEE_CAP, URGENT_FEE_CAP } from '../../test/test-chain';

/**
 * The attack: a payer pays for pages with vouchers, starts a withdrawal of its whole deposit, and
 * waits for a fee spike above RELAYER_MAX_FEE_PER_GAS_WEI to outlast the withdraw delay, when it
 * takes back what it was charged. A claim of a channel whose withdrawal would take charged money
 * (urgent) may pay up to RELAYER_URGENT_MAX_FEE_PER_GAS_WEI, first sent or re-priced; every other
 * claim keeps the normal maximum, and a claim refused for fees leaves its vouchers private (the
 * payer may still ask a cooperative refund with them). On the worker's anvil, the base fee raised.
 */
describe('claims under a fee spike: urgent ones up to RELAYER_URGENT_MAX_FEE_PER_GAS_WEI', () => {
  let db: TestDatabase;
  let app: TestApp;
  /** Another instance whose claimer's runs end once they have broadcast, and re-price what is stuck at once. */
  let claiming: TestApp;
  const PRICE = 10_000n; // the site's default 0.01 USD
  const DEPOSIT = 50_000n;

  beforeAll(async () => {
    db = await createTestDatabase();
    // A page is worth a claim, and an urgent one (claimIsUrgent: at least CLAIM_MIN_MICROS at stake).
    const { feeBump, batchSettlement } = loadConfig({}).chain;
    const claimsAPage = { ...batchSettlement, claimIntervalMs: 0, claimMinMicros: PRICE };
    app = await startTestApp({
      database: db.database,
      isolateChain: true,
      config: { chain: { batchSettlement: claimsAPage } },
    });
    claiming = await startTestApp({
      database: db.database,
      config: {
        chain: { settlementTimeoutMs: 0, batchSettlement: claimsAPage, feeBump: { ...feeBump, afterSeconds: 0 } },
      },
    });
  });
  afterAll(async () => {
    await test().setAutomine(true);
    await claiming.app.close();
    await app.close();
    await db.dispose();
  });
  // Fees fall after each test, and what it left unclaimed or unsettled is collected.
  afterEach(async () => {
    await endFeeSpike(app.chain);
    await app.app.get(ClaimerService).runOnce({ force: true });
  });

  const test = () => devTestClient(app.chain.rpcUrl);
  /** A run's time once a withdrawal started now is within half of its delay of its deadline: its claim is urgent. */
  const late = () => new Date(Date.now() + (loadConfig({}).chain.batchSettlement.withdrawDelaySeconds * 1000 * 3) / 4);
  const nextBaseFee = (wei: bigint) => test().setNextBlockBaseFeePerGas({ baseFeePerGas: wei });
  const relayerNonce = () =>
    app.chain.publicClient.getTransactionCount({ address: app.chain.relayer.account.address, blockTag: 'pending' });
  const transaction = (hash: string) => app.chain.publicClient.getTransaction({ hash: hash as Hash });
  const channelRow = (channelId: string) =>
    app.database.prisma.paymentChannel.findUniqueOrThrow({ where: { channelId } });
  const verify = (gateId: string, payment: unknown) =>
    app.call('POST', `/v1/gates/${gateId}/verify`, { body: { payment } });

  /** A block mined at `wei` a gas: what a transaction sent now is priced from (a fifth more, plus the tip). */
  async function spike(wei: bigint) {
    await nextBaseFee(wei);
    await test().mine({ blocks: 1 });
    return (await app.chain.publicClient.estimateFeesPerGas()).maxFeePerGas;
  }

  /** A new receiver's site, and a payer whose channel there holds DEPOSIT and paid one page (charged PRICE). */
  async function paidChannel(onSite?: Awaited<ReturnType<typeof batchSettlementSite>>['site']) {
    const site = onSite ?? (await batchSettlementSite(app, newWallet().address)).site;
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    await fundEth(app, payer.address);
    const offer = await batchGate(app, site);
    const channel = testChannel(app, payer, offer.accepted);
    expect((await verify(offer.id, await channel.payment(offer, PRICE, { deposit: DEPOSIT }))).status).toBe(200);
    return { site, payer, channel };
  }

  /** The payer starts withdrawing its whole deposit, charged money included (nothing is claimed yet). */
  function startWithdrawal({ payer, channel }: Awaited<ReturnType<typeof paidChannel>>, amount = DEPOSIT) {
    return startChannelWithdrawal(app, payer, channel.config, amount);
  }

  it('sends the claim of a channel whose withdrawal would take charged money above the normal maximum, below the urgent one', async () => {
    const paid = await paidChannel();
    await startWithdrawal(paid);
    const asked = await spike(50n * GWEI);
    expect(asked).toBeGreaterThan(ROUTINE_FEE_CAP);
    expect(asked).toBeLessThan(URGENT_FEE_CAP);
    const nonce = await relayerNonce();

    const run = await app.app.get(ClaimerService).runOnce({ now: late() });

    expect(run.claims).toHaveLength(1);
    expect(await relayerNonce()).toBeGreaterThan(nonce);
    expect((await app.chain.publicClient.getTransactionReceipt({ hash: run.claims[0] })).status).toBe('success');
    // Claimed on the chain (read back): the withdrawal can no longer take it.
    expect((await channelRow(paid.channel.channelId)).claimed).toBe(PRICE);
  }, 60_000);

  it('sends no claim of a channel no withdrawal threatens at the same fees; its vouchers stay private, and a cooperative refund goes through once fees fall', async () => {
    const { site, channel } = await paidChannel();
    expect(await spike(50n * GWEI)).toBeGreaterThan(ROUTINE_FEE_CAP);
    const nonce = await relayerNonce();

    expect(await app.app.get(ClaimerService).runOnce({ force: true })).toMatchObject({ claims: [], settles: [] });

    expect(await relayerNonce()).toBe(nonce);
    // No claim carried the voucher: it is still the payer's own, and may ask a refund.
    expect(await channelRow(channel.channelId)).toMatchObject({ claimed: 0n, published: 0n });
    await endFeeSpike(app.chain);
    const offer = await batchGate(app, site);
    const voucher = await channel.payment(offer, PRICE);
    const refunded = await verify(offer.id, { ...voucher, payload: { ...voucher.payload, type: 'refund' } });
    expect(refunded.body).toMatchObject({ status: 'refunded', refund_amount: (DEPOSIT - PRICE).toString() });
  }, 60_000);

  it('sends no urgent claim above the urgent maximum either, and logs an error naming the channel, the fees, the bound and the deadline', async () => {
    const paid = await paidChannel();
    await startWithdrawal(paid);
    const asked = await spike(200n * GWEI);
    expect(asked).toBeGreaterThan(URGENT_FEE_CAP);
    const nonce = await relayerNonce();
    const error = jest.spyOn(Logger.prototype, 'error');
    try {
      expect(await app.app.get(ClaimerService).runOnce({ now: late() })).toMatchObject({ claims: [], settles: [] });
      const logged = error.mock.calls
        .map(([message]) => String(message))
        .filter((m) => m.includes(paid.channel.channelId));
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatch(/RELAYER_URGENT_MAX_FEE_PER_GAS_WEI/);
      expect(logged[0]).toContain(URGENT_FEE_CAP.toString());
      expect(logged[0]).toMatch(/withdraw.*\d{4}-\d{2}-\d{2}T/);
    } finally {
      error.mockRestore();
    }
    expect(await relayerNonce()).toBe(nonce);
    expect(await channelRow(paid.channel.channelId)).toMatchObject({ claimed: 0n, published: 0n });
  }, 60_000);

  it('re-prices a stuck urgent claim above the normal maximum, to what the chain asks; the replacement lands', async () => {
    const paid = await paidChannel();
    await startWithdrawal(paid);
    const claimer = claiming.app.get(ClaimerService);
    await test().setAutomine(false);
    const sent = await claimer.runOnce({ now: late() });
    expect(sent.claims).toHaveLength(1);
    const stuck = await transaction(sent.claims[0]);
    expect(stuck.maxFeePerGas!).toBeLessThan(ROUTINE_FEE_CAP);
    // The next block's base fee above the normal maximum: no copy at that maximum could be mined.
    await nextBaseFee(30n * GWEI);

    expect(await claimer.runOnce({ now: late() })).toMatchObject({ claims: [], settles: [] });
    const claims = await app.database.prisma.channelClaim.findMany({
      where: { receiver: paid.channel.config.receiver.toLowerCase() },
      orderBy: { createdAt: 'asc' },
    });
    expect(claims).toHaveLength(2);
    const replacement = await transaction(claims[1].txHash);
    expect(replacement).toMatchObject({ nonce: stuck.nonce, input: stuck.input, blockNumber: null });
    expect(replacement.maxFeePerGas!).toBeGreaterThan(30n * GWEI);
    expect(replacement.maxFeePerGas!).toBeLessThanOrEqual(URGENT_FEE_CAP);

    await test().mine({ blocks: 1 });
    await test().setAutomine(true);
    expect((await app.chain.publicClient.getTransactionReceipt({ hash: claims[1].txHash as Hash })).status).toBe(
      'success',
    );
    await claimer.runOnce({ now: late() });
    expect((await channelRow(paid.channel.channelId)).claimed).toBe(PRICE);
  }, 60_000);
  it('sends the claim of a withdrawing channel at the normal maximum while its deadline is more than half a delay away: a spike waits, nothing published', async () => {
    const paid = await paidChannel();
    await startWithdrawal(paid);
    expect(await spike(50n * GWEI)).toBeGreaterThan(ROUTINE_FEE_CAP);
    const nonce = await relayerNonce();

    expect(await app.app.get(ClaimerService).runOnce()).toMatchObject({ claims: [], settles: [] });

    expect(await relayerNonce()).toBe(nonce);
    expect(await channelRow(paid.channel.channelId)).toMatchObject({ claimed: 0n, published: 0n });
  }, 60_000);

  it('claims an urgent channel apart from a withdrawing one that is not (less than CLAIM_MIN_MICROS at stake)', async () => {
    const urgent = await paidChannel();
    const small = await paidChannel(urgent.site);
    await startWithdrawal(urgent); // takes the page charged: PRICE at stake
    await startWithdrawal(small, DEPOSIT - PRICE / 2n); // leaves half a page: PRICE / 2 at stake

    const run = await app.app.get(ClaimerService).runOnce({ now: late() });

    expect(run.claims).toHaveLength(2);
    const carried = await Promise.all(
      run.claims.map(async (hash) => {
        const { args } = decodeFunctionData({ abi: batchSettlementAbi, data: (await transaction(hash)).input });
        return (args![0] as readonly { voucher: { channel: { payer: string } } }[]).map((c) =>
          c.voucher.channel.payer.toLowerCase(),
        );
      }),
    );
    // The urgent one first, alone; the other at routine fees, due at once all the same.
    expect(carried).toEqual([[urgent.channel.config.payer.toLowerCase()], [small.channel.config.payer.toLowerCase()]]);
    expect((await channelRow(urgent.channel.channelId)).claimed).toBe(PRICE);
    expect((await channelRow(small.channel.channelId)).claimed).toBe(PRICE);
  }, 60_000);

  it('claims every urgent channel before any other: a withdrawing channel ahead of it whose routine claim the fees refuse holds none back', async () => {
    const small = await paidChannel(); // first in the queue of withdrawing channels
    const urgent = await paidChannel(small.site);
    await startWithdrawal(small, DEPOSIT - PRICE / 2n); // routine: PRICE / 2 at stake, due at once
    await startWithdrawal(urgent); // urgent: PRICE at stake
    // A claimer whose claims take one channel each: the two are in slices of their own, the small one's first.
    const { batchSettlement } = loadConfig({}).chain;
    const oneAClaim = await startTestApp({
      database: db.database,
      config: {
        chain: {
          batchSettlement: { ...batchSettlement, claimIntervalMs: 0, claimMinMicros: PRICE, claimMaxChannels: 1 },
        },
      },
    });
    try {
      const asked = await spike(50n * GWEI);
      expect(asked).toBeGreaterThan(ROUTINE_FEE_CAP);
      expect(asked).toBeLessThan(URGENT_FEE_CAP);

      const run = await oneAClaim.app.get(ClaimerService).runOnce({ now: late() });

      // The urgent claim went, alone; the routine one waits for fees to fall (the run fails on it).
      expect(run.claims).toHaveLength(1);
      const { args } = decodeFunctionData({ abi: batchSettlementAbi, data: (await transaction(run.claims[0])).input });
      const payers = (args![0] as readonly { voucher: { channel: { payer: string } } }[]).map((c) =>
        c.voucher.channel.payer.toLowerCase(),
      );
      expect(payers).toEqual([urgent.channel.config.payer.toLowerCase()]);
      expect((await channelRow(urgent.channel.channelId)).claimed).toBe(PRICE);
      expect((await channelRow(small.channel.channelId)).claimed).toBe(0n);
    } finally {
      await oneAClaim.app.close();
    }
  }, 60_000);

  it('keeps a channel seen withdrawing only while its withdrawal would take charged money', async () => {
    const takes = await paidChannel();
    const unspentOnly = await paidChannel(takes.site);
    await startWithdrawal(takes); // takes the page charged
    await startWithdrawal(unspentOnly, DEPOSIT - PRICE); // asks back only what is unspent

    await app.app.get(ClaimerService).runOnce({ now: late() });

    expect((await channelRow(unspentOnly.channel.channelId)).withdrawalSeen).toBe(false);
    // The other was claimed (its withdrawal can take nothing charged now): no longer seen either.
    expect(await channelRow(takes.channel.channelId)).toMatchObject({ claimed: PRICE, withdrawalSeen: false });
  }, 60_000);
});
