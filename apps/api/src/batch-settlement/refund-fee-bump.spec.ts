import { BATCH_REASONS } from '@crawlgate/core';
import { Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { devTestClient } from '@crawlgate/devchain';
import type { Hash } from 'viem';
import { batchSettlementSite, type TestSite } from '../../test/fixtures';
import { startRpcRewriter } from '../../test/rpc-rewriter';
import { fundUsdc, newWallet, usdcBalance } from '../../test/test-agent';
import { startTestApp, type TestApp, type TestAppOptions } from '../../test/test-app';
import { batchGate, escrowRead, testChannel } from '../../test/test-channel';
import { endFeeSpike, workerChain } from '../../test/test-chain';
import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { minimumReplacementFee } from '../chain/fee-bump';
import { RefundsService } from './refunds.service';

/**
 * A cooperative refund stuck under a fee spike (automine off, the next block's base fee raised
 * above what it offered, so no block can take it) holds the channel, and every later relayer
 * transaction behind its nonce: the refund holds' sweep re-prices it, as the claimer does claims.
 */
describe('refunds stuck under a fee spike', () => {
  let db: TestDatabase;
  let app: TestApp;
  let refunding: TestApp;
  let site: TestSite;
  const payTo = newWallet().address;
  const PRICE = 10_000n; // the site's default 0.01 USD
  const DEPOSIT = 50_000n;
  const REPRICE_AT_ONCE = { afterSeconds: 0, maxFeePerGas: 10n ** 12n, urgentMaxFeePerGas: 10n ** 12n };
  // Shared by every instance here: each reads the sites' secrets.
  const masterKey = randomBytes(32);

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startTestApp({ database: db.database, masterKey, isolateChain: true });
    // Its refund requests answer 503 once broadcast (settlementTimeoutMs 0); its sweep re-prices at once.
    refunding = await startTestApp({
      database: db.database,
      masterKey,
      config: { chain: { settlementTimeoutMs: 0, feeBump: REPRICE_AT_ONCE } },
    });
    ({ site } = await batchSettlementSite(app, payTo));
  });
  afterAll(async () => {
    await test().setAutomine(true);
    await refunding.app.close();
    await app.close();
    await db.dispose();
  });
  // Automine back on, and the fees fallen, for the next test.
  afterEach(() => endFeeSpike(app.chain));

  const test = () => devTestClient(app.chain.rpcUrl);
  const nextBaseFee = (wei: bigint) => test().setNextBlockBaseFeePerGas({ baseFeePerGas: wei });
  const transaction = (hash: string) => app.chain.publicClient.getTransaction({ hash: hash as Hash });
  const isPending = async (hash: string) => (await transaction(hash).catch(() => null))?.blockNumber === null;
  const relayerNonce = () =>
    app.chain.publicClient.getTransactionCount({ address: app.chain.relayer.account.address, blockTag: 'pending' });
  const rowOf = (channelId: string) => app.database.prisma.paymentChannel.findUniqueOrThrow({ where: { channelId } });
  const sweep = (on: TestApp) => on.app.get(RefundsService).endHoldsOver();
  const verify = (on: TestApp, gateId: string, payment: unknown) =>
    on.call('POST', `/v1/gates/${gateId}/verify`, { body: { payment } });

  /** A channel holding DEPOSIT that paid one page, and its refund request for the rest. */
  async function channelToRefund() {
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    const first = await batchGate(app, site);
    const channel = testChannel(app, payer, first.accepted);
    expect((await verify(app, first.id, await channel.payment(first, PRICE, { deposit: DEPOSIT }))).status).toBe(200);
    const offer = await batchGate(app, site);
    const voucher = await channel.payment(offer, PRICE);
    const refund = { ...voucher, payload: { ...voucher.payload, type: 'refund' } };
    return { payer, channel, offer, refund };
  }

  /**
   * The refund's transaction as the hold stores it, pending (automine off) and left below the next
   * block's base fee. Not mined here: anvil drops a transaction its block's base fee leaves out
   * (geth keeps it waiting), so the spike stays the next block's until a test mines.
   */
  async function stuckRefund(hash: Hash) {
    const stuck = await transaction(hash);
    await nextBaseFee(stuck.maxFeePerGas! * 3n);
    const next = await app.chain.publicClient.getBlock({ blockTag: 'pending' });
    expect(next.baseFeePerGas).toBeGreaterThan(stuck.maxFeePerGas!);
    expect(await isPending(hash)).toBe(true);
    return stuck;
  }

  /** A refund request broadcast by `refunding` (answered 503, not mined: automine is off), stuck under a spike. */
  async function sentAndStuck() {
    const asked = await channelToRefund();
    await test().setAutomine(false);
    const sent = await verify(refunding, asked.offer.id, asked.refund);
    expect([sent.status, sent.body.detail]).toEqual([503, expect.stringMatching(/sent and not confirmed/)]);
    const held = await rowOf(asked.channel.channelId);
    expect(held.refundId).not.toBeNull();
    const hash = held.refundTx!.trim() as Hash;
    return { ...asked, hash, stuck: await stuckRefund(hash) };
  }

  /** Another instance on the database, its sweep re-pricing at once under `feeBump`, on `chainRpcUrl`. */
  const sweeper = (options: Pick<TestAppOptions, 'chainRpcUrl'> & { feeBump: typeof REPRICE_AT_ONCE }) =>
    startTestApp({
      database: db.database,
      masterKey,
      chainRpcUrl: options.chainRpcUrl,
      config: { chain: { settlementTimeoutMs: 0, feeBump: options.feeBump } },
    });

  it('re-prices the stuck refund at its nonce; whichever lands ends the hold, and the payer is refunded once', async () => {
    const { payer, channel, offer, refund, hash, stuck } = await sentAndStuck();
    const nonce = await relayerNonce();

    expect(await sweep(refunding)).toBe(0);
    const repriced = await rowOf(channel.channelId);
    const replacedBy = repriced.refundTx!.trim();
    expect(replacedBy).not.toBe(hash);
    expect(repriced).toMatchObject({
      refundReplacedTxs: [hash],
      refundTxNonce: stuck.nonce,
      refundId: expect.any(String),
    });
    const replacement = await transaction(replacedBy);
    expect(replacement).toMatchObject({ nonce: stuck.nonce, to: stuck.to, input: stuck.input, gas: stuck.gas });
    expect(replacement.blockNumber).toBeNull();
    expect(replacement.maxFeePerGas).toBeGreaterThanOrEqual(minimumReplacementFee(stuck.maxFeePerGas!));
    expect(replacement.maxPriorityFeePerGas).toBeGreaterThanOrEqual(minimumReplacementFee(stuck.maxPriorityFeePerGas!));
    // In its place, at its nonce: the original is gone, and no relayer nonce was taken.
    expect(await transaction(hash).catch(() => null)).toBeNull();
    expect(await relayerNonce()).toBe(nonce);
    // Priced as the chain asks now: the next sweep leaves it as it is.
    expect(await sweep(refunding)).toBe(0);
    expect(await rowOf(channel.channelId)).toMatchObject({ refundTx: replacedBy, refundReplacedTxs: [hash] });

    await test().mine({ blocks: 1 });
    await test().setAutomine(true);
    expect((await app.chain.publicClient.getTransactionReceipt({ hash: replacedBy as Hash })).status).toBe('success');
    // The replacement landed: the hold ends as landed, once.
    expect(await sweep(refunding)).toBe(1);
    expect(await sweep(refunding)).toBe(0);
    expect(await rowOf(channel.channelId)).toMatchObject({
      refundId: null,
      refundedCharged: PRICE,
      refundsThrough: 1n,
    });
    expect(await escrowRead(app, 'refundNonce', channel.channelId)).toBe(1n);
    expect(await escrowRead(app, 'channels', channel.channelId)).toEqual([PRICE, PRICE]);
    expect(await usdcBalance(app, payer.address)).toBe(1_000_000n - PRICE);
    // Its voucher is used up: asked again, nothing more is sent back.
    const again = await verify(app, offer.id, refund);
    expect([again.status, again.body.reason]).toEqual([402, BATCH_REASONS.refundPayload]);
    expect(await usdcBalance(app, payer.address)).toBe(1_000_000n - PRICE);
  }, 60_000);

  it('answers the request still waiting for the original with the refund its replacement made', async () => {
    const waiting = await startTestApp({
      database: db.database,
      masterKey,
      config: { chain: { settlementTimeoutMs: 45_000, feeBump: REPRICE_AT_ONCE } },
    });
    try {
      const { payer, channel, offer, refund } = await channelToRefund();
      await test().setAutomine(false);
      const answer = verify(waiting, offer.id, refund);
      const hash = await refundBroadcast(channel.channelId);
      // viem has read the original while it waits: it tells its replacement apart once that is mined.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await stuckRefund(hash);
      expect(await sweep(refunding)).toBe(0);
      const replacedBy = (await rowOf(channel.channelId)).refundTx!.trim();
      expect(replacedBy).not.toBe(hash);
      await test().mine({ blocks: 1 });

      const refunded = await answer;
      expect(refunded.status).toBe(200);
      expect(refunded.body).toMatchObject({ status: 'refunded', refund_amount: '40000', refund_tx_hash: replacedBy });
      expect(await rowOf(channel.channelId)).toMatchObject({ refundId: null, refundedCharged: PRICE });
      expect(await usdcBalance(app, payer.address)).toBe(1_000_000n - PRICE);
    } finally {
      await waiting.app.close();
    }
  }, 60_000);

  it('sends nothing when a replacement would pass the maximum fee: the refund waits, with a warning, and lands once fees fall', async () => {
    const { payer, channel, hash, stuck } = await sentAndStuck();
    // At the cap: what the stuck refund already offers, less than the 12.5 % more a replacement needs.
    const capped = await sweeper({
      feeBump: { afterSeconds: 0, maxFeePerGas: stuck.maxFeePerGas!, urgentMaxFeePerGas: stuck.maxFeePerGas! },
    });
    const nonce = await relayerNonce();
    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      expect(await sweep(capped)).toBe(0);
      expect(warn).toHaveBeenCalledWith(expect.stringMatching(/is stuck.*RELAYER_MAX_FEE_PER_GAS_WEI/));
      expect(await rowOf(channel.channelId)).toMatchObject({ refundTx: hash, refundReplacedTxs: [] });
      expect(await relayerNonce()).toBe(nonce);
      expect(await isPending(hash)).toBe(true);

      // The fees fall: it is mined as it was, and the hold ends.
      await nextBaseFee(1n);
      await test().mine({ blocks: 1 });
      expect(await sweep(capped)).toBe(1);
      expect(await usdcBalance(app, payer.address)).toBe(1_000_000n - PRICE);
    } finally {
      warn.mockRestore();
      await capped.app.close();
    }
  }, 60_000);

  it("signs nothing when the node answers the refund's hash with another call", async () => {
    const { payer, channel, hash } = await sentAndStuck();
    const attacker = newWallet().address;
    // The node says our pending refund is a call to the attacker: re-signed, the relayer would send it.
    const node = await startRpcRewriter(workerChain().rpcUrl, ({ method, params, result }) =>
      method === 'eth_getTransactionByHash' && String(params[0]).toLowerCase() === hash && result
        ? { ...(result as object), to: attacker, input: '0xdeadbeef' }
        : result,
    );
    const forging = await sweeper({ chainRpcUrl: node.url, feeBump: REPRICE_AT_ONCE });
    const nonce = await relayerNonce();
    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      expect(await sweep(forging)).toBe(0);
      expect(warn).toHaveBeenCalledWith(expect.stringMatching(/not the relayer's own/));
      expect(await rowOf(channel.channelId)).toMatchObject({ refundTx: hash, refundReplacedTxs: [] });
      expect(await relayerNonce()).toBe(nonce);
      expect(await isPending(hash)).toBe(true);
    } finally {
      warn.mockRestore();
      await forging.app.close();
      await node.close();
    }
    // An honest node's sweep re-prices it; it lands.
    expect(await sweep(refunding)).toBe(0);
    await test().mine({ blocks: 1 });
    expect(await sweep(refunding)).toBe(1);
    expect(await usdcBalance(app, payer.address)).toBe(1_000_000n - PRICE);
  }, 60_000);

  /** The refund transaction the hold of `channelId` stores, once its request has broadcast it. */
  async function refundBroadcast(channelId: string): Promise<Hash> {
    for (let tries = 0; tries < 100; tries++) {
      const tx = (await app.database.prisma.paymentChannel.findUnique({ where: { channelId } }))?.refundTx?.trim();
      if (tx && (await isPending(tx))) return tx as Hash;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`no refund broadcast for channel ${channelId}`);
  }

  it('does not send the refund again when a re-priced copy it has not read yet landed', async () => {
    // A request that read the hold (the original hash only) before the sweep stored a re-priced copy,
    // and judges it after that copy was mined, finds the original unknown to the node and its relayer
    // nonce used: failed, to its reads. Sent again, the refund would name a refund nonce the copy used
    // and could only revert, at the relayer's gas: it is stored only while the hold's transaction is
    // the one judged, so nothing is sent.
    const { channel, refund, offer, hash, stuck } = await sentAndStuck();
    const proto = RefundsService.prototype as unknown as { fateOf: (...args: unknown[]) => Promise<unknown> };
    const fateOf = proto.fateOf;
    let armed = true;
    let replacedBy = '';
    let usedAfterLanding = -1;
    const judging = jest.spyOn(proto, 'fateOf').mockImplementation(async function (this: unknown, ...args: unknown[]) {
      if (armed) {
        armed = false;
        expect(await sweep(refunding)).toBe(0);
        replacedBy = (await rowOf(channel.channelId)).refundTx!.trim();
        expect(replacedBy).not.toBe(hash);
        await test().mine({ blocks: 1 });
        expect((await app.chain.publicClient.getTransactionReceipt({ hash: replacedBy as Hash })).status).toBe(
          'success',
        );
        usedAfterLanding = await relayerNonce();
      }
      return fateOf.apply(this, args);
    });
    let again: Awaited<ReturnType<typeof verify>>;
    try {
      again = await verify(refunding, offer.id, refund);
    } finally {
      judging.mockRestore();
    }
    expect(usedAfterLanding).toBe(stuck.nonce + 1);
    expect(await escrowRead<bigint>(app, 'refundNonce', channel.channelId)).toBe(1n);
    await test().mine({ blocks: 1 });
    expect({
      answer: again.status,
      reason: again.body.detail,
      sentAfterTheRefundLanded: (await relayerNonce()) - usedAfterLanding,
      holdsAnother: ![replacedBy, undefined].includes((await rowOf(channel.channelId)).refundTx?.trim()),
    }).toEqual({
      answer: 402,
      reason: expect.stringMatching(/refund of this channel is in flight/),
      sentAfterTheRefundLanded: 0,
      holdsAnother: false,
    });
  });
});
