import { randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { devTestClient } from '@crawlgate/devchain';
import { type Hash } from 'viem';
import { openGate, pricedSite, type TestSite } from '../../test/fixtures';
import { fundUsdc, newWallet, signPayment, transfersTo, usdcBalance } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { minimumReplacementFee } from '../chain/fee-bump';
import { ReconcilerService } from './reconciler.service';
import { endFeeSpike, signedTransactionOf } from '../../test/test-chain';

/**
 * A relayer transaction stuck under a fee spike, on the worker's anvil with automine off: the
 * chain's next base fee is raised above what it offered, so no block can take it, and every later
 * relayer transaction waits behind its nonce.
 */
describe('relayer settlements stuck under a fee spike', () => {
  let db: TestDatabase;
  let app: TestApp;
  let site: TestSite;
  const masterKey = randomBytes(32);
  const payee = newWallet();
  const agent = newWallet();

  beforeAll(async () => {
    db = await createTestDatabase();
    // Requests answer 202 once broadcast (the reconciler finishes them); a stuck one is re-priced at
    // the reconciler's first look; transfers not the relayer's wait the default 120 s hold.
    app = await startTestApp({
      database: db.database,
      masterKey,
      isolateChain: true,
      config: {
        chain: {
          settlementTimeoutMs: 0,
          feeBump: { afterSeconds: 0, maxFeePerGas: 10n ** 12n, urgentMaxFeePerGas: 10n ** 12n },
        },
      },
    });
    ({ site } = await pricedSite(app, payee));
    await fundUsdc(app, agent.address, '1');
  });
  afterAll(async () => {
    await test().setAutomine(true);
    await app.close();
    await db.dispose();
  });
  afterEach(() => test().setAutomine(true));

  const test = () => devTestClient(app.chain.rpcUrl);
  const reconcile = (on: TestApp = app) => on.app.get(ReconcilerService).runOnce();
  const transaction = (hash: string) => app.chain.publicClient.getTransaction({ hash: hash as Hash });
  const isPending = async (hash: string) => (await transaction(hash).catch(() => null))?.blockNumber === null;
  const rowOf = (gate: { ref: string }) =>
    app.database.prisma.payment.findUniqueOrThrow({ where: { gateId: gate.ref } });

  /** A payment's request answered 202 with its settlement broadcast (not mined: automine is off). */
  async function paidAndBroadcast(url: string, on: TestApp = app) {
    const gate = await openGate(on, site, url);
    const payment = await signPayment(on, agent, gate);
    const sent = await on.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } });
    expect(sent.status).toBe(202);
    return { gate, payment, hash: sent.body.tx_hash as Hash };
  }

  /**
   * The next block's base fee well above what `hash` offered: it cannot be in that block. Not mined
   * here: anvil drops a transaction its block's base fee leaves out (geth keeps it waiting), so the
   * spike is held as the next block's until a test mines.
   */
  async function spikeAbove(hash: Hash) {
    const offered = (await transaction(hash)).maxFeePerGas!;
    await nextBaseFee(offered * 3n);
    expect((await app.chain.publicClient.getBlock({ blockTag: 'pending' })).baseFeePerGas).toBeGreaterThan(offered);
    expect(await isPending(hash)).toBe(true);
  }
  const nextBaseFee = (wei: bigint) => test().setNextBlockBaseFeePerGas({ baseFeePerGas: wei });

  it('re-prices the stuck settlement at its nonce, which is then mined, settles once, and the payments behind it proceed', async () => {
    const before = await usdcBalance(app, agent.address);
    await test().setAutomine(false);
    const first = await paidAndBroadcast('/spike/first');
    await spikeAbove(first.hash);
    // Behind it at the next nonce, priced for the spike: it is mined only after the stuck one.
    const second = await paidAndBroadcast('/spike/second');
    const stuck = await transaction(first.hash);
    expect((await transaction(second.hash)).nonce).toBe(stuck.nonce + 1);

    expect(await reconcile()).toMatchObject({ finalized: 0, released: 0, resubmitted: 0, waiting: 2 });
    const repriced = await rowOf(first.gate);
    expect(repriced.txHash).not.toBe(first.hash);
    expect(repriced.replacedTxHashes).toEqual([first.hash]);
    const replacement = await transaction(repriced.txHash!);
    expect(replacement.nonce).toBe(stuck.nonce);
    expect(replacement.input).toBe(stuck.input);
    expect(replacement.gas).toBe(stuck.gas);
    expect(replacement.maxFeePerGas).toBeGreaterThanOrEqual(minimumReplacementFee(stuck.maxFeePerGas!));
    expect(replacement.maxPriorityFeePerGas).toBeGreaterThanOrEqual(minimumReplacementFee(stuck.maxPriorityFeePerGas!));
    // Now above the next block's base fee, with the tip miners ask.
    const next = await app.chain.publicClient.getBlock({ blockTag: 'pending' });
    expect(replacement.maxFeePerGas! - next.baseFeePerGas!).toBeGreaterThanOrEqual(replacement.maxPriorityFeePerGas!);
    // The one behind it, priced for the spike, is left as it is: only its nonce held it back.
    expect(await rowOf(second.gate)).toMatchObject({ txHash: second.hash, replacedTxHashes: [] });
    // The node took the replacement in its place: the original is gone, never to be mined.
    expect(await transaction(first.hash).catch(() => null)).toBeNull();

    // One block at the spiked base fee takes both, in nonce order.
    await test().mine({ blocks: 1 });
    expect(await reconcile()).toMatchObject({ finalized: 2, released: 0, resubmitted: 0 });
    const firstPaid = await app.call('GET', `/v1/gates/${first.gate.id}`);
    expect(firstPaid.body).toMatchObject({ status: 'paid', tx_hash: repriced.txHash });
    expect((await app.call('GET', `/v1/gates/${second.gate.id}`)).body).toMatchObject({
      status: 'paid',
      tx_hash: second.hash,
    });
    // Charged once for each: the vanished original paid nothing, and nothing was sent a second time.
    const price = BigInt(first.gate.amount);
    expect(await usdcBalance(app, agent.address)).toBe(before - 2n * price);
    const paidToPayee = (await transfersTo(app, payee.address)).map((transfer) => transfer.hash);
    expect(paidToPayee.filter((hash) => hash === repriced.txHash || hash === first.hash)).toEqual([repriced.txHash]);
    // Its request, asked again, answers the payment the replacement made.
    const again = await app.call('POST', `/v1/gates/${first.gate.id}/verify`, { body: { payment: first.payment } });
    expect(again.status).toBe(200);
    expect(again.body.tx_hash).toBe(repriced.txHash);
  }, 60_000);

  it('settles the payment with the replaced original when that is the one mined, the replacement vanished', async () => {
    const before = await usdcBalance(app, agent.address);
    await test().setAutomine(false);
    const sent = await paidAndBroadcast('/spike/original-mined');
    const original = await transaction(sent.hash);
    // The original as signed, to send again once the node forgot it for its replacement.
    const raw = signedTransactionOf(original);
    await spikeAbove(sent.hash);
    await reconcile();
    const repriced = await rowOf(sent.gate);
    expect(repriced.replacedTxHashes).toEqual([sent.hash]);

    // The replacement vanishes (a node restart, another node's pool), the fees fall, the original lands.
    await test().request({ method: 'anvil_dropTransaction' as never, params: [repriced.txHash] as never });
    await nextBaseFee(1n);
    await app.chain.relayer.sendRawTransaction({ serializedTransaction: raw });
    await test().mine({ blocks: 1 });
    expect((await app.chain.publicClient.getTransactionReceipt({ hash: sent.hash })).status).toBe('success');
    expect(await transaction(repriced.txHash!).catch(() => null)).toBeNull();

    // Its own settlement, at once: not another's transfer held 120 s, nor an authorization sent again.
    expect(await reconcile()).toMatchObject({ finalized: 1, released: 0, resubmitted: 0 });
    const paid = await app.call('GET', `/v1/gates/${sent.gate.id}`);
    expect(paid.body).toMatchObject({ status: 'paid', tx_hash: sent.hash });
    expect(await usdcBalance(app, agent.address)).toBe(before - BigInt(sent.gate.amount));
  }, 60_000);

  it('leaves a stuck settlement waiting, with a warning, when a replacement would pass the maximum fee', async () => {
    await test().setAutomine(false);
    const sent = await paidAndBroadcast('/spike/capped');
    // Another instance on the database, whose maximum fee is what the stuck one already offers: a
    // replacement must offer 12.5 % more. (Below it, the first send would not have been signed.)
    const { maxFeePerGas } = await transaction(sent.hash);
    const capped = await startTestApp({
      database: db.database,
      masterKey,
      config: {
        chain: {
          settlementTimeoutMs: 0,
          feeBump: { afterSeconds: 0, maxFeePerGas: maxFeePerGas!, urgentMaxFeePerGas: maxFeePerGas! },
        },
      },
    });
    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      await spikeAbove(sent.hash);
      expect(await reconcile(capped)).toMatchObject({ finalized: 0, released: 0, resubmitted: 0, waiting: 1 });
      expect(await rowOf(sent.gate)).toMatchObject({ txHash: sent.hash, replacedTxHashes: [] });
      expect(await isPending(sent.hash)).toBe(true);
      expect(warn).toHaveBeenCalledWith(expect.stringMatching(/is stuck.*RELAYER_MAX_FEE_PER_GAS_WEI/));
      // The fees fall: it is mined as it was, and settles.
      await nextBaseFee(1n);
      await test().mine({ blocks: 1 });
      expect(await reconcile(capped)).toMatchObject({ finalized: 1 });
    } finally {
      warn.mockRestore();
      await capped.app.close();
    }
  }, 60_000);

  it('answers 200 to the request still waiting for the original once its replacement is mined', async () => {
    // Another instance on the database whose requests wait for their settlement.
    const waiting = await startTestApp({
      database: db.database,
      masterKey,
      config: {
        chain: {
          settlementTimeoutMs: 45_000,
          feeBump: { afterSeconds: 0, maxFeePerGas: 10n ** 12n, urgentMaxFeePerGas: 10n ** 12n },
        },
      },
    });
    try {
      await test().setAutomine(false);
      const gate = await openGate(waiting, site, '/spike/awaited');
      const payment = await signPayment(waiting, agent, gate);
      const answer = waiting.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } });
      const original = await broadcastFor(gate);
      // viem has read the original while it waits: it tells its replacement apart once that is mined.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await spikeAbove(original);
      await reconcile();
      const repriced = await rowOf(gate);
      expect(repriced.replacedTxHashes).toEqual([original]);
      await test().mine({ blocks: 1 });

      const paid = await answer;
      expect(paid.status).toBe(200);
      expect(paid.body.tx_hash).toBe(repriced.txHash);
    } finally {
      // The fees fall again for the tests after it.
      await endFeeSpike(app.chain);
      await waiting.app.close();
    }
  }, 60_000);

  /** The settlement hash written down for the gate's payment, once its request has broadcast it. */
  async function broadcastFor(gate: { ref: string }): Promise<Hash> {
    for (let tries = 0; tries < 100; tries++) {
      const row = await app.database.prisma.payment.findUnique({ where: { gateId: gate.ref } });
      if (row?.txHash && (await isPending(row.txHash))) return row.txHash as Hash;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`no settlement broadcast for gate ${gate.ref}`);
  }

  it('leaves a pending settlement alone while the chain asks no more than it offered', async () => {
    await test().setAutomine(false);
    const sent = await paidAndBroadcast('/spike/none');
    expect(await reconcile()).toMatchObject({ waiting: 1 });
    expect(await rowOf(sent.gate)).toMatchObject({ txHash: sent.hash, replacedTxHashes: [] });
    await test().mine({ blocks: 1 });
    expect(await reconcile()).toMatchObject({ finalized: 1 });
  }, 60_000);
});
