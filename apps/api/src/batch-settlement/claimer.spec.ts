import { Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { keccak256, type Hex } from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import { BATCH_REASONS } from '@crawlgate/core';
import { devTestClient, increaseTime, mineBlocks, revert, snapshot } from '@crawlgate/devchain';
import { pricedSite, registerPublisher } from '../../test/fixtures';
import { capsLogRange, startRpcRewriter, type RpcRewriter } from '../../test/rpc-rewriter';
import { fundEth, fundUsdc, newWallet, usdcBalance } from '../../test/test-agent';
import { startConfirmingApp, startTestApp, type TestApp } from '../../test/test-app';
import { batchOffer, escrowRead, payerCallsEscrow, testChannel } from '../../test/test-channel';
import { workerChain } from '../../test/test-chain';
import { createTestDatabase } from '../../test/test-database';
import { loadConfig } from '../config/config';
import { ChannelStore } from './channel.store';
import { ClaimerHeartbeatStore } from './claimer-heartbeat.store';
import { StuckAheadService } from './stuck-ahead.service';
import { sendFromRelayer, waitForReceipt } from '../payments/settlement';
import { ClaimerService, type ClaimRun } from './claimer.service';

/** The range a capping node in these tests answers eth_getLogs over, in blocks. */
const LOG_RANGE_CAP = 100n;

/*
 * The claimer collects accepted vouchers for the receiver. The API is stopped after taking the
 * vouchers and a new one started on the same database: it claims them all, once (totalClaimed is
 * read back from the chain), and the receiver's balance is exactly the sum of the prices.
 */
describe('voucher claimer', () => {
  it('claims what an API accepted before it restarted, settles it to the receiver exactly, and never twice', async () => {
    const db = await createTestDatabase();
    const masterKey = randomBytes(32);
    const payTo = newWallet().address;
    let first: TestApp | undefined = await startTestApp({ database: db.database, masterKey });
    let second: TestApp | undefined;
    try {
      const { site, publisher } = await pricedSite(first, payTo);
      await first.call('PATCH', `/v1/sites/${site.siteId}`, {
        body: { batch_settlement: true },
        headers: publisher.auth,
      });
      const gate = async (app: TestApp, path: string) =>
        batchOffer(
          await app.call('POST', '/v1/gates', { body: { url: path }, headers: { 'x-site-token': site.siteToken } }),
        );

      // Two payers, two channels, five pages between them at 0.01 and 0.001.
      const paid: bigint[] = [];
      for (const [payer, pages] of [
        [newWallet(), ['/a/1', '/cheap/1', '/a/2']],
        [newWallet(), ['/cheap/2', '/a/3']],
      ] as const) {
        await fundUsdc(first, payer.address, '1');
        let total = 0n;
        for (const [i, path] of pages.entries()) {
          const offer = await gate(first, path);
          const channel = testChannel(first, payer, offer.accepted);
          total += BigInt(offer.accepted.amount);
          const response = await first.call('POST', `/v1/gates/${offer.id}/verify`, {
            body: { payment: await channel.payment(offer, total, i === 0 ? { deposit: 100_000n } : {}) },
          });
          expect(response.status).toBe(200);
          paid.push(BigInt(offer.accepted.amount));
        }
      }
      const owed = paid.reduce((a, b) => a + b, 0n);
      expect(owed).toBe(10_000n * 3n + 1_000n * 2n);
      await first.close();
      first = undefined;

      second = await startTestApp({ database: db.database, masterKey });
      const claimer = second.app.get(ClaimerService);
      const channels = async () =>
        (await second!.call('GET', `/v1/sites/${site.siteId}/channels`, { headers: publisher.auth })).body;
      // Served and paid, not claimed yet: all of it is still in the payers' channels.
      expect(await channels()).toMatchObject({
        site_id: site.siteId,
        claimed_amount: '0',
        unclaimed_amount: owed.toString(),
        unclaimed_usd: '0.032',
      });
      expect((await channels()).channels).toHaveLength(2);
      const stranger = await registerPublisher(second);
      expect((await second.call('GET', `/v1/sites/${site.siteId}/channels`, { headers: stranger.auth })).status).toBe(
        404,
      );
      // Not due yet: below the size and younger than the age.
      expect(await claimer.runOnce()).toEqual({ claims: [], settles: [], skipped: false });
      expect(await usdcBalance(second, payTo)).toBe(0n);

      const run = await claimer.runOnce({ force: true });
      expect(run.claims).toHaveLength(1);
      expect(run.settles).toHaveLength(1);
      expect(await usdcBalance(second, payTo)).toBe(owed);
      expect(await channels()).toMatchObject({
        claimed_amount: owed.toString(),
        claimed_usd: '0.032',
        unclaimed_amount: '0',
      });
      const claims = await second.database.prisma.channelClaim.findMany({ where: { receiver: payTo.toLowerCase() } });
      expect(claims).toEqual([
        expect.objectContaining({ channels: 2, amount: owed, txHash: run.claims[0], settleTxHash: run.settles[0] }),
      ]);
      for (const channel of await second.database.prisma.paymentChannel.findMany({
        where: { receiver: payTo.toLowerCase() },
      })) {
        expect(channel.unclaimedSince).toBeNull();
        const [, totalClaimed] = await escrowRead<readonly [bigint, bigint]>(
          second,
          'channels',
          channel.channelId as `0x${string}`,
        );
        expect(totalClaimed).toBe(channel.charged);
      }

      // Again: nothing left to claim or settle.
      expect(await claimer.runOnce({ force: true })).toEqual({ claims: [], settles: [], skipped: false });
      // A stored row put back to "unclaimed" (a crash between the claim and its record) is reconciled from the chain, not claimed again.
      await second.database.prisma.paymentChannel.updateMany({
        where: { receiver: payTo.toLowerCase() },
        data: { claimed: 0n, unclaimedSince: new Date(0) },
      });
      expect(await claimer.runOnce({ force: true })).toEqual({ claims: [], settles: [], skipped: false });
      expect(await usdcBalance(second, payTo)).toBe(owed);
    } finally {
      await first?.close();
      await second?.close();
      await db.dispose();
    }
  });

  it('after the claim authorizer key changed, claims the channels naming the new one and leaves the old ones, counted, to the old key', async () => {
    // Channels name their receiver authorizer: one claim batch signed with the new key cannot carry
    // a channel naming the old one (the escrow reverts the whole batch), so none would ever be claimed.
    const db = await createTestDatabase();
    const masterKey = randomBytes(32);
    const payTo = newWallet().address;
    let before: TestApp | undefined = await startTestApp({ database: db.database, masterKey });
    let after: TestApp | undefined;
    let warnings: jest.SpyInstance | undefined;
    try {
      const { site, publisher } = await pricedSite(before, payTo);
      await before.call('PATCH', `/v1/sites/${site.siteId}`, {
        body: { batch_settlement: true },
        headers: publisher.auth,
      });
      /** A new payer's channel on `app`, paying one page with its deposit. */
      const payPage = async (app: TestApp, path: string) => {
        const payer = newWallet();
        await fundUsdc(app, payer.address, '1');
        const offer = batchOffer(
          await app.call('POST', '/v1/gates', { body: { url: path }, headers: { 'x-site-token': site.siteToken } }),
        );
        const channel = testChannel(app, payer, offer.accepted);
        const paid = await app.call('POST', `/v1/gates/${offer.id}/verify`, {
          body: { payment: await channel.payment(offer, 10_000n, { deposit: 50_000n }) },
        });
        expect(paid.status).toBe(200);
        return channel;
      };
      const old = await payPage(before, '/rotation/old');
      await before.close();
      before = undefined;

      const claimAuthorizerPrivateKey = generatePrivateKey();
      const batchSettlement = {
        ...loadConfig({}).chain.batchSettlement,
        claimIntervalMs: 0,
        claimAuthorizerPrivateKey,
      };
      // Spied before the app starts, as in redis-outage.spec: the app's logs are silent otherwise.
      warnings = jest.spyOn(Logger.prototype, 'warn');
      after = await startTestApp({ database: db.database, masterKey, config: { chain: { batchSettlement } } });
      const current = await payPage(after, '/rotation/new');
      expect(current.config.receiverAuthorizer).not.toBe(old.config.receiverAuthorizer);
      const run = await after.app.get(ClaimerService).runOnce({ force: true });
      expect(run.claims).toHaveLength(1);
      const claimed = async (channelId: Hex) =>
        (await escrowRead<readonly [bigint, bigint]>(after!, 'channels', channelId))[1];
      expect(await claimed(current.channelId)).toBe(10_000n);
      expect(await usdcBalance(after, payTo)).toBe(10_000n);
      // The old channel's voucher stays for the old key to claim, and the run says so once.
      expect(await claimed(old.channelId)).toBe(0n);
      const stranded = warnings.mock.calls.filter(([message]) => /stranded/.test(String(message)));
      expect(stranded).toHaveLength(1);
      expect(String(stranded[0][0])).toMatch(/^1 channel/);
    } finally {
      warnings?.mockRestore();
      await before?.close();
      await after?.close();
      await db.dispose();
    }
  });

  it('claims a withdrawing channel first, however many unclaimed channels are queued ahead of it', async () => {
    // The queue gives two channels a claim; two payers' channels, each too small and too young to
    // be due, are ahead of the one whose payer then starts to withdraw what it owes.
    const { app, payTo, paidChannel, withdrawal } = await voucherSite({ claimMaxChannels: 2 });
    try {
      await paidChannel('/ahead-1', 10_000n, [10_000n]);
      await paidChannel('/ahead-2', 10_000n, [10_000n]);
      const { payer, channel } = await paidChannel('/owing', 100_000n, [10_000n, 20_000n, 30_000n]);
      await withdrawal(payer, channel).start(100_000n);

      const run = await app.app.get(ClaimerService).runOnce();
      expect(run.claims.length).toBeGreaterThanOrEqual(1);
      await withdrawal(payer, channel).finishAfterDelay();
      // The withdrawing payer got back only what it did not spend: its 30,000 went to the receiver.
      expect(await usdcBalance(app, payer.address)).toBe(1_000_000n - 30_000n);
      expect(await usdcBalance(app, payTo)).toBeGreaterThanOrEqual(30_000n);
    } finally {
      await app.close();
    }
  });

  it('finds a withdrawal started between two runs further apart than RECENT_LOG_BLOCKS, behind a queue, and claims it first', async () => {
    const { app, payTo, paidChannel, withdrawal } = await voucherSite({ claimMaxChannels: 2 }, { recentLogBlocks: 10 });
    try {
      await paidChannel('/far-ahead-1', 10_000n, [10_000n]);
      await paidChannel('/far-ahead-2', 10_000n, [10_000n]);
      const { payer, channel } = await paidChannel('/far-owing', 100_000n, [10_000n, 20_000n, 30_000n]);
      const claimer = app.app.get(ClaimerService);
      expect((await claimer.runOnce()).claims).toHaveLength(0); // nothing due: small and young
      await withdrawal(payer, channel).start(100_000n);
      await mineBlocks(app.chain.rpcUrl, 20); // the next run comes more than ten blocks later

      expect((await claimer.runOnce()).claims).toHaveLength(1);
      await withdrawal(payer, channel).finishAfterDelay();
      expect(await usdcBalance(app, payer.address)).toBe(1_000_000n - 30_000n);
      expect(await usdcBalance(app, payTo)).toBe(30_000n);
    } finally {
      await app.close();
    }
  });

  it('spends no gas on a withdrawal that cannot take what was charged (a payer asking back 1 unit each run)', async () => {
    const { app, paidChannel, withdrawal } = await voucherSite();
    try {
      const { payer, channel } = await paidChannel('/tiny', 100_000n, [10_000n]);
      await withdrawal(payer, channel).start(1n);
      const run = await app.app.get(ClaimerService).runOnce();
      expect(run).toEqual({ claims: [], settles: [], skipped: false });
    } finally {
      await app.close();
    }
  });

  it('claims a voucher a quarter of the withdraw delay old, when CLAIM_MAX_AGE_SECONDS is longer than that', async () => {
    // A queue of channels not yet due must not outlast a withdrawal the claimer has not seen.
    const { app, paidChannel } = await voucherSite({ withdrawDelaySeconds: 900, claimMaxAgeSeconds: 3_600 });
    try {
      await paidChannel('/aged', 100_000n, [10_000n]);
      const claimer = app.app.get(ClaimerService);
      expect((await claimer.runOnce({ now: new Date(Date.now() + 200_000) })).claims).toHaveLength(0);
      expect((await claimer.runOnce({ now: new Date(Date.now() + 230_000) })).claims).toHaveLength(1);
    } finally {
      await app.close();
    }
  });

  it('claims by the withdraw delay a channel was opened with: a restart with a longer BATCH_WITHDRAW_DELAY_SECONDS gives it no longer', async () => {
    // Its payer may withdraw 900 s after asking, whatever this instance's delay for new channels.
    const { app, paidChannel } = await voucherSite({ withdrawDelaySeconds: 900, claimMaxAgeSeconds: 3_600 });
    const restarted = await startTestApp({
      database: app.database,
      config: { chain: { batchSettlement: { ...app.config.chain.batchSettlement, withdrawDelaySeconds: 86_400 } } },
    });
    try {
      await paidChannel('/aged', 100_000n, [10_000n]);
      const claimer = restarted.app.get(ClaimerService);
      expect((await claimer.runOnce({ now: new Date(Date.now() + 200_000) })).claims).toHaveLength(0);
      expect((await claimer.runOnce({ now: new Date(Date.now() + 230_000) })).claims).toHaveLength(1);
    } finally {
      await restarted.close();
      await app.close();
    }
  });

  it('claims at once when the payer starts a withdrawal, so the payer cannot take back what it owes; new vouchers then stop', async () => {
    // Every voucher reads the chain here; a state read a moment before the withdrawal is channel-state-reuse.spec's.
    const { app, payTo, site, paidChannel, withdrawal } = await voucherSite();
    try {
      const { payer, channel } = await paidChannel('/w', 100_000n, [10_000n, 20_000n, 30_000n]);
      // Nothing is claimed yet, so the escrow lets the payer start withdrawing all of it.
      await withdrawal(payer, channel).start(100_000n);

      // A voucher now would draw on money that may leave: refused.
      const offer = batchOffer(
        await app.call('POST', '/v1/gates', { body: { url: '/w/3' }, headers: { 'x-site-token': site.siteToken } }),
      );
      const refused = await app.call('POST', `/v1/gates/${offer.id}/verify`, {
        body: { payment: await channel.payment(offer, 40_000n) },
      });
      expect(refused.status).toBe(402);
      expect(refused.body.reason).toBe(BATCH_REASONS.cumulativeExceedsBalance);

      // Not due by size or age, but urgent: the claimer claims and settles on its next run.
      const run = await app.app.get(ClaimerService).runOnce();
      expect(run.claims).toHaveLength(1);
      expect(await usdcBalance(app, payTo)).toBe(30_000n);

      await withdrawal(payer, channel).finishAfterDelay();
      // The payer gets back only what it did not spend.
      expect(await usdcBalance(app, payer.address)).toBe(1_000_000n - 30_000n);
    } finally {
      await app.close();
    }
  });

  /**
   * Through `node` (a JSON-RPC proxy in front of the chain): a payer withdrawing behind a queue of
   * two channels is found, claimed first, and the claimer's run finishes (its heartbeat written);
   * the payer then gets back only what it did not spend. `ran`: more checks after the first run.
   */
  async function claimsWithdrawalBehindQueue(
    node: RpcRewriter,
    name: string,
    { before, ran }: { before?: (app: TestApp) => Promise<void>; ran?: (app: TestApp) => Promise<void> } = {},
  ) {
    const { app, payTo, paidChannel, withdrawal } = await voucherSite({ claimMaxChannels: 2 }, {}, node.url);
    try {
      await before?.(app);
      await paidChannel(`/${name}-ahead-1`, 10_000n, [10_000n]);
      await paidChannel(`/${name}-ahead-2`, 10_000n, [10_000n]);
      const { payer, channel } = await paidChannel(`/${name}-owing`, 100_000n, [10_000n, 20_000n, 30_000n]);
      await withdrawal(payer, channel).start(100_000n);
      const heartbeats = app.app.get(ClaimerHeartbeatStore);
      const last = (await heartbeats.last())!.ageMs;

      await app.app.get(ClaimerService).runOnce();
      expect((await heartbeats.last())!.ageMs).toBeLessThan(last);
      await ran?.(app);
      await withdrawal(payer, channel).finishAfterDelay();
      // The withdrawing payer got back only what it did not spend: its 30,000 went to the receiver.
      expect(await usdcBalance(app, payer.address)).toBe(1_000_000n - 30_000n);
      expect(await usdcBalance(app, payTo)).toBeGreaterThanOrEqual(30_000n);
    } finally {
      await app.close();
      await node.close();
    }
  }

  it('through a node capping eth_getLogs at 100 blocks, finds a withdrawal behind a queue, claims it first, and finishes its run', async () => {
    // Hosted nodes refuse eth_getLogs over a wider range (by provider and plan); the escrow's
    // withdrawals are searched over RECENT_LOG_BLOCKS (10,000). Refused, the run claimed in queue
    // order and counted as unfinished: no voucher is taken while no claimer finishes its runs.
    const refusals = { count: 0 };
    const capped = await startRpcRewriter(
      workerChain().rpcUrl,
      ({ result }) => result,
      capsLogRange(LOG_RANGE_CAP, refusals),
    );
    await claimsWithdrawalBehindQueue(capped, 'capped', {
      // The recent blocks now span more than the node serves at once. (A cap of 100 rather than a
      // provider's 1,000 or 2,000: the local chain mines about 400 blocks a second, and this test
      // mining 3,000 ran past its timeout on a loaded CI machine.)
      before: (app) => mineBlocks(app.chain.rpcUrl, 3 * Number(LOG_RANGE_CAP)),
      ran: async (app) => {
        expect(app.chain.logSpan.blocks).toBeLessThanOrEqual(LOG_RANGE_CAP);
        // The width that answered is kept: the next run is refused nothing.
        const refusedFirst = refusals.count;
        expect(refusedFirst).toBeGreaterThan(0);
        await app.app.get(ClaimerService).runOnce();
        expect(refusals.count).toBe(refusedFirst);
      },
    });
  });

  it("asks the node for the withdrawals of its own unclaimed channels alone: a shared escrow's log flooded by anyone's channels (more events than the node answers) neither fails its run nor hides the withdrawal", async () => {
    // Off the local chain the escrow is x402's, shared: anyone can fill its log with withdrawals of
    // channels of their own. This node refuses, as a hosted node refuses over 10,000 results, any
    // search of the escrow's withdrawals not narrowed to named channels.
    const flooded = await startRpcRewriter(
      workerChain().rpcUrl,
      ({ result }) => result,
      ({ method, params }) => {
        const filter = params[0] as { topics?: unknown[] } | undefined;
        if (method !== 'eth_getLogs' || Array.isArray(filter?.topics?.[1])) return undefined;
        return { code: -32005, message: 'query returned more than 10000 results' };
      },
    );
    await claimsWithdrawalBehindQueue(flooded, 'flooded');
  });

  it('keeps a channel queued when a node behind the chain says it holds nothing more: claimed once read again, so a withdrawal cannot take what it owes', async () => {
    const { app, payTo, site, paidChannel, withdrawal } = await voucherSite();
    try {
      const { payer, channel } = await paidChannel('/lag', 10_000n, [10_000n]);
      const claimer = app.app.get(ClaimerService);
      expect((await claimer.runOnce({ force: true })).claims).toHaveLength(1); // all it held is claimed
      const before = await app.chain.publicClient.getBlockNumber({ cacheTime: 0 });
      // The payer deposits again with its next page, which is charged.
      const offer = batchOffer(
        await app.call('POST', '/v1/gates', {
          body: { url: '/lag/again' },
          headers: { 'x-site-token': site.siteToken },
        }),
      );
      const paid = await app.call('POST', `/v1/gates/${offer.id}/verify`, {
        body: { payment: await channel.payment(offer, 20_000n, { deposit: 50_000n }) },
      });
      expect(paid.status).toBe(200);
      // The claimer's next read of the escrow is answered by a node still before that deposit (a
      // load-balanced RPC a few blocks behind): the channel seems to hold only what was claimed.
      const client = app.chain.publicClient;
      const call = client.call.bind(client);
      let lagged = 0;
      const lag = jest.spyOn(client, 'call').mockImplementation(((args: Parameters<typeof client.call>[0]) => {
        const escrowRead = args.to?.toLowerCase() === app.chain.batchSettlement!.escrow.toLowerCase();
        if (lagged === 0 && escrowRead && args.blockNumber === undefined) {
          lagged++;
          return call({ ...args, blockNumber: before } as never);
        }
        return call(args);
      }) as never);
      try {
        // Asked for by hand: a scheduled run reads no channel the database shows not due (receiversToVisit).
        await claimer.runOnce({ force: true });
      } finally {
        lag.mockRestore();
      }
      expect(lagged).toBe(1);
      // The payer asks everything back; the claimer, reading the chain as it is, collects what was charged first.
      await withdrawal(payer, channel).start(50_000n);
      expect((await claimer.runOnce()).claims).toHaveLength(1);
      await withdrawal(payer, channel).finishAfterDelay();
      expect(await usdcBalance(app, payTo)).toBe(20_000n);
    } finally {
      await app.close();
    }
  });

  it('keeps a channel queued while a claim of it is short of the confirmations (CONFIRMATIONS=2): a reorg dropping that claim leaves it to be claimed again, not lost', async () => {
    const { app, payTo, paidChannel } = await voucherSite();
    // Two instances of an API that waits for two confirmations, on the same database and chain.
    const confirming = () => startConfirmingApp(app, { chain: { settlementTimeoutMs: 400 } });
    let stopped: TestApp | undefined;
    let restarted: TestApp | undefined;
    try {
      const { channel } = await paidChannel('/reorg', 100_000n, [10_000n]);
      const beforeClaim = await snapshot(app.chain.rpcUrl);
      // The claim is mined, with one confirmation; its run stops waiting for the second.
      stopped = await confirming();
      expect((await stopped.app.get(ClaimerService).runOnce({ force: true })).claims).toHaveLength(1);
      await stopped.close();
      stopped = undefined;
      // Another instance (or this one restarted) reads the channel while the claim is still that shallow.
      restarted = await confirming();
      expect((await restarted.app.get(ClaimerService).runOnce({ force: true })).claims).toEqual([]);
      const row = () =>
        app.database.prisma.paymentChannel.findUniqueOrThrow({ where: { channelId: channel.channelId } });
      expect((await row()).unclaimedSince).not.toBeNull();
      // The reorg: the claim's block is gone, and the claim with it (and the settle sent after it).
      await revert(app.chain.rpcUrl, beforeClaim);
      const run = await app.app.get(ClaimerService).runOnce({ force: true });
      expect([run.claims.length, run.settles.length]).toEqual([1, 1]);
      expect(await usdcBalance(app, payTo)).toBe(10_000n);
      expect(await row()).toMatchObject({ claimed: 10_000n, unclaimedSince: null });
    } finally {
      await restarted?.close();
      await stopped?.close();
      await app.close();
    }
  });

  it('takes a channel out of the queue once a claim of it is as deep as the confirmations (CONFIRMATIONS=2), without claiming it again', async () => {
    const { app, payTo, paidChannel } = await voucherSite();
    let confirming: TestApp | undefined;
    try {
      const { channel } = await paidChannel('/deep-claim', 100_000n, [10_000n]);
      confirming = await startConfirmingApp(app, { chain: { settlementTimeoutMs: 400 } });
      const claimer = confirming.app.get(ClaimerService);
      // The claim is mined, with one confirmation; the run stops waiting for the second.
      expect((await claimer.runOnce({ force: true })).claims).toHaveLength(1);
      const row = () =>
        app.database.prisma.paymentChannel.findUniqueOrThrow({ where: { channelId: channel.channelId } });
      expect((await row()).unclaimedSince).not.toBeNull();
      // One block more: the next scheduled run (not forced) finds the claim that deep and records it,
      // and settles it to the receiver (the first run stopped before its settle).
      await mineBlocks(app.chain.rpcUrl, 1);
      const run = await claimer.runOnce();
      expect([run.claims.length, run.settles.length]).toEqual([0, 1]);
      expect(await row()).toMatchObject({ claimed: 10_000n, unclaimedSince: null });
      expect(await usdcBalance(app, payTo)).toBe(10_000n);
    } finally {
      await confirming?.close();
      await app.close();
    }
  });

  it('keeps a channel at its place in the queue while its deposit is short of the confirmations (CONFIRMATIONS raised after its vouchers were taken)', async () => {
    const { app, paidChannel } = await voucherSite();
    let confirming: TestApp | undefined;
    try {
      const { channel } = await paidChannel('/shallow-deposit', 100_000n, [10_000n]);
      confirming = await startConfirmingApp(app);
      const queuedSince = async () =>
        (await app.database.prisma.paymentChannel.findUniqueOrThrow({ where: { channelId: channel.channelId } }))
          .unclaimedSince;
      const before = await queuedSince();
      // Not due (neither size nor age): read, not claimed. The deposit's block is the latest, not yet confirmed.
      expect(await confirming.app.get(ClaimerService).runOnce()).toEqual({ claims: [], settles: [], skipped: false });
      expect(await queuedSince()).toEqual(before);
    } finally {
      await confirming?.close();
      await app.close();
    }
  });

  it('sends a claim once while it waits to be mined, and records it once it is', async () => {
    const { app, payTo, paidChannel } = await voucherSite({}, { settlementTimeoutMs: 400 });
    const node = devTestClient(app.chain.rpcUrl);
    try {
      await paidChannel('/slow', 100_000n, [10_000n]);
      const claimer = app.app.get(ClaimerService);
      // The chain mines nothing for a while (a congested chain, a fee spike): each run's wait times out.
      await node.setAutomine(false);
      const claims: Hex[] = [];
      for (let run = 0; run < 3; run++) claims.push(...(await claimer.runOnce({ force: true })).claims);
      expect(claims).toHaveLength(1);
      await node.setAutomine(true);
      await node.mine({ blocks: 1 });
      // Mined: the next run records it and settles what it claimed.
      const next = await claimer.runOnce();
      expect(next.claims).toEqual([]);
      expect(next.settles).toHaveLength(1);
      const rows = await app.database.prisma.channelClaim.findMany({ where: { receiver: payTo.toLowerCase() } });
      expect(rows.map((row) => [row.txHash, row.amount])).toEqual([[claims[0], 10_000n]]);
      expect(await usdcBalance(app, payTo)).toBe(10_000n);
    } finally {
      await node.setAutomine(true);
      await app.close();
    }
  });

  it('records a claim sent before a restart once it lands, and sends none again while it is on its way (or from another instance)', async () => {
    const { app, payTo, paidChannel } = await voucherSite({}, { settlementTimeoutMs: 400 });
    const node = devTestClient(app.chain.rpcUrl);
    const relayer = app.chain.relayer.account.address;
    const sentCount = () => app.chain.publicClient.getTransactionCount({ address: relayer, blockTag: 'pending' });
    try {
      await paidChannel('/restart', 100_000n, [10_000n, 20_000n]);
      await node.setAutomine(false);
      const [sent] = (await app.app.get(ClaimerService).runOnce({ force: true })).claims;
      expect(sent).toMatch(/^0x/);
      // The API restarts (or another instance on the same database runs) while the claim waits in the mempool.
      const restarted = claimerLike(app);
      const before = await sentCount();
      expect(await restarted.runOnce({ force: true })).toEqual({ claims: [], settles: [], skipped: false });
      expect(await sentCount()).toBe(before);
      await node.setAutomine(true);
      await node.mine({ blocks: 1 });

      // Landed: the restarted claimer records it and settles what it claimed; nothing is claimed twice.
      const next = await restarted.runOnce({ force: true });
      expect(next).toMatchObject({ claims: [], settles: [expect.stringMatching(/^0x/)] });
      const receiver = payTo.toLowerCase();
      expect(await app.database.prisma.channelClaim.findMany({ where: { receiver } })).toEqual([
        expect.objectContaining({ txHash: sent, amount: 20_000n, channels: 1, settleTxHash: next.settles[0] }),
      ]);
      expect(await usdcBalance(app, payTo)).toBe(20_000n);
    } finally {
      await node.setAutomine(true);
      await app.close();
    }
  });

  it('drops the record of a claim whose broadcast the node refused once its nonce is taken, and records the claim sent in its place once', async () => {
    const { app, payTo, claimRefused, onlyClaim, close } = await refusedClaimSite('/refused');
    try {
      const claimer = await claimRefused();
      // The relayer's next transaction, mined, takes the nonce the refused claim was signed with.
      const other = await sendFromRelayer(app.chain, newWallet().address, '0x');
      expect((await waitForReceipt(app.chain, other, 10_000))?.status).toBe('success');
      // The refused claim, never on the chain, does not hold the receiver's claims back.
      const run = await claimerLike(app).runOnce({ force: true });
      expect(run).toMatchObject({ claims: [expect.stringMatching(/^0x/)], settles: [expect.stringMatching(/^0x/)] });
      expect(await claimer.runOnce({ force: true })).toEqual({ claims: [], settles: [], skipped: false });
      await onlyClaim(run);
      expect(await usdcBalance(app, payTo)).toBe(10_000n);
    } finally {
      await close();
    }
  });

  it('drops the record of a refused claim once a claim signed at other fees takes its nonce', async () => {
    const { app, refused, claimRefused, onlyClaim, close } = await refusedClaimSite('/refused-fees');
    try {
      const claimer = await claimRefused();
      // Fees rose meanwhile: the claim signed again is another transaction, at the same nonce.
      const chain = devTestClient(app.chain.rpcUrl);
      const { baseFeePerGas } = await app.chain.publicClient.getBlock();
      await chain.setNextBlockBaseFeePerGas({ baseFeePerGas: baseFeePerGas! * 3n });
      await chain.mine({ blocks: 1 });
      const run = await claimer.runOnce({ force: true });
      expect(run.claims).toHaveLength(1);
      expect(run.claims[0]).not.toBe(refused[0]);
      await onlyClaim(run);
    } finally {
      await close();
    }
  });

  it('sends a settle once while it waits to be mined, and marks the claim settled by it once it is', async () => {
    const { app, payTo, paidChannel } = await voucherSite({}, { settlementTimeoutMs: 400 });
    const chain = devTestClient(app.chain.rpcUrl);
    try {
      await paidChannel('/p', 100_000n, [10_000n]);
      const claimer = app.app.get(ClaimerService);
      // The claim lands; its settle is not mined within the timeout, nor in the runs that follow.
      const claimed = await claimOnly(app, payTo);
      const receiver = payTo.toLowerCase();
      await chain.setAutomine(false);
      const settles: string[] = [];
      for (let run = 0; run < 3; run++) settles.push(...(await claimer.runOnce()).settles);
      await chain.setAutomine(true);
      await chain.mine({ blocks: 1 });
      expect(settles).toHaveLength(1);

      expect(await claimer.runOnce()).toEqual({ claims: [], settles: [], skipped: false });
      expect(await app.database.prisma.channelClaim.findMany({ where: { receiver } })).toEqual([
        expect.objectContaining({ txHash: claimed, settleTxHash: settles[0] }),
      ]);
      expect(await usdcBalance(app, payTo)).toBe(10_000n);
    } finally {
      await chain.setAutomine(true);
      await app.close();
    }
  });

  it('sends nothing behind a settle still on its way; once it lands, claims and settles the rest with a settle of their own', async () => {
    const { app, payTo, paidChannel } = await voucherSite({}, { settlementTimeoutMs: 400 });
    const chain = devTestClient(app.chain.rpcUrl);
    const relayer = app.chain.relayer.account.address;
    const sentCount = () => app.chain.publicClient.getTransactionCount({ address: relayer, blockTag: 'pending' });
    try {
      await paidChannel('/o', 100_000n, [10_000n]);
      const first = await claimOnly(app, payTo);
      await paidChannel('/o2', 100_000n, [10_000n, 20_000n]);
      const claimer = app.app.get(ClaimerService);
      // The first claim's settle waits in the mempool: the second channel's claim, due, is not sent behind it.
      await chain.setAutomine(false);
      const [settled] = (await claimer.runOnce()).settles;
      const before = await sentCount();
      expect(await claimer.runOnce({ force: true })).toEqual({ claims: [], settles: [], skipped: false });
      expect(await sentCount()).toBe(before);
      await chain.setAutomine(true);
      await chain.mine({ blocks: 1 });

      const run = await claimer.runOnce({ force: true });
      expect(run).toMatchObject({ claims: [expect.any(String)], settles: [expect.any(String)] });
      const rows = await app.database.prisma.channelClaim.findMany({ where: { receiver: payTo.toLowerCase() } });
      expect(rows.map((row) => [row.txHash, row.settleTxHash]).sort()).toEqual(
        [
          [first, settled],
          [run.claims[0], run.settles[0]],
        ].sort(),
      );
      expect(await usdcBalance(app, payTo)).toBe(30_000n);
    } finally {
      await chain.setAutomine(true);
      await app.close();
    }
  });

  it('records a settle sent before a restart once it lands, and sends none again while it is on its way (or from another instance)', async () => {
    const { app, payTo, paidChannel } = await voucherSite({}, { settlementTimeoutMs: 400 });
    const node = devTestClient(app.chain.rpcUrl);
    const relayer = app.chain.relayer.account.address;
    const sentCount = () => app.chain.publicClient.getTransactionCount({ address: relayer, blockTag: 'pending' });
    try {
      await paidChannel('/settle-restart', 100_000n, [10_000n]);
      const claimed = await claimOnly(app, payTo);
      await node.setAutomine(false);
      const [settle] = (await app.app.get(ClaimerService).runOnce()).settles;
      expect(settle).toMatch(/^0x/);
      // The API restarts (or another instance on the same database runs) while the settle waits in the mempool.
      const restarted = claimerLike(app);
      const before = await sentCount();
      expect(await restarted.runOnce()).toEqual({ claims: [], settles: [], skipped: false });
      expect(await sentCount()).toBe(before);
      await node.setAutomine(true);
      await node.mine({ blocks: 1 });

      // Landed: the restarted claimer records the claim settled by it, and sends nothing.
      expect(await restarted.runOnce()).toEqual({ claims: [], settles: [], skipped: false });
      expect(await sentCount()).toBe(before);
      const receiver = payTo.toLowerCase();
      expect(await app.database.prisma.channelClaim.findMany({ where: { receiver } })).toEqual([
        expect.objectContaining({ txHash: claimed, settleTxHash: settle }),
      ]);
      expect(await app.database.prisma.channelSettle.findMany({ where: { receiver } })).toEqual([
        expect.objectContaining({ txHash: settle, landedAt: expect.any(Date) }),
      ]);
      expect(await usdcBalance(app, payTo)).toBe(10_000n);
    } finally {
      await node.setAutomine(true);
      await app.close();
    }
  });

  it('drops the record of a settle whose broadcast the node refused once its nonce is taken, and records the settle sent in its place', async () => {
    const { app, payTo, refusing, refused, close } = await refusedClaimSite('/refused-settle');
    try {
      const claimed = await claimOnly(app, payTo);
      refusing.on = true;
      expect(await app.app.get(ClaimerService).runOnce()).toEqual({ claims: [], settles: [], skipped: false });
      refusing.on = false;
      expect(refused).toHaveLength(1);
      const receiver = payTo.toLowerCase();
      expect(await app.database.prisma.channelSettle.findMany({ where: { receiver } })).toEqual([
        expect.objectContaining({ txHash: refused[0], landedAt: null }),
      ]);
      // The relayer's next transaction, mined, takes the nonce the refused settle was signed with.
      const other = await sendFromRelayer(app.chain, newWallet().address, '0x');
      expect((await waitForReceipt(app.chain, other, 10_000))?.status).toBe('success');

      const run = await claimerLike(app).runOnce();
      expect(run).toMatchObject({ claims: [], settles: [expect.stringMatching(/^0x/)] });
      expect(run.settles[0]).not.toBe(refused[0]);
      expect(await app.database.prisma.channelSettle.findMany({ where: { receiver } })).toEqual([
        expect.objectContaining({ txHash: run.settles[0], landedAt: expect.any(Date) }),
      ]);
      expect(await app.database.prisma.channelClaim.findMany({ where: { receiver } })).toEqual([
        expect.objectContaining({ txHash: claimed, settleTxHash: run.settles[0] }),
      ]);
      expect(await usdcBalance(app, payTo)).toBe(10_000n);
    } finally {
      await close();
    }
  });

  it('drops the record of a refused settle once a settle signed at other fees takes its nonce', async () => {
    const { app, payTo, refusing, refused, close } = await refusedClaimSite('/refused-settle-fees');
    try {
      const claimed = await claimOnly(app, payTo);
      refusing.on = true;
      const claimer = app.app.get(ClaimerService);
      expect(await claimer.runOnce()).toEqual({ claims: [], settles: [], skipped: false });
      refusing.on = false;
      // Fees rose meanwhile: the settle signed again is another transaction, at the same nonce.
      const chain = devTestClient(app.chain.rpcUrl);
      const { baseFeePerGas } = await app.chain.publicClient.getBlock();
      await chain.setNextBlockBaseFeePerGas({ baseFeePerGas: baseFeePerGas! * 3n });
      await chain.mine({ blocks: 1 });
      const run = await claimer.runOnce();
      expect(run.settles).toHaveLength(1);
      expect(run.settles[0]).not.toBe(refused[0]);
      const receiver = payTo.toLowerCase();
      expect(await app.database.prisma.channelSettle.findMany({ where: { receiver } })).toEqual([
        expect.objectContaining({ txHash: run.settles[0], landedAt: expect.any(Date) }),
      ]);
      expect(await app.database.prisma.channelClaim.findMany({ where: { receiver } })).toEqual([
        expect.objectContaining({ txHash: claimed, settleTxHash: run.settles[0] }),
      ]);
    } finally {
      await close();
    }
  });

  it('settles a claim whose settle never landed (the API stopped between the two) on its next run', async () => {
    const { app, payTo, paidChannel } = await voucherSite();
    try {
      await paidChannel('/s', 100_000n, [10_000n, 20_000n]);
      // The claim alone, as a run that stopped before its settle leaves it: claimed in the escrow, not the receiver's.
      const claimed = await claimOnly(app, payTo);
      expect(await usdcBalance(app, payTo)).toBe(0n);

      const claimer = app.app.get(ClaimerService);
      const run = await claimer.runOnce();
      expect(run).toMatchObject({ claims: [], settles: [expect.stringMatching(/^0x/)] });
      expect(await usdcBalance(app, payTo)).toBe(20_000n);
      const receiver = payTo.toLowerCase();
      expect(await app.database.prisma.channelClaim.findMany({ where: { receiver } })).toEqual([
        expect.objectContaining({ txHash: claimed, amount: 20_000n, settleTxHash: run.settles[0] }),
      ]);
      // Settled: the next run sends nothing.
      expect(await claimer.runOnce()).toEqual({ claims: [], settles: [], skipped: false });
    } finally {
      await app.close();
    }
  });

  it('settles a claim whose run stopped once it landed, before it was written down (the database failing then)', async () => {
    const { app, payTo, paidChannel } = await voucherSite();
    const store = app.app.get(ChannelStore);
    const failing = jest
      .spyOn(store, 'recordClaimLanded')
      .mockRejectedValueOnce(new Error('the database went away after the claim landed'));
    try {
      await paidChannel('/s', 100_000n, [10_000n, 20_000n]);
      const claimer = app.app.get(ClaimerService);
      const stopped = await claimer.runOnce({ force: true });
      expect([stopped.claims.length, stopped.settles.length]).toEqual([1, 0]);
      expect(await usdcBalance(app, payTo)).toBe(0n);
      // The next run finds the receiver again: the claim is read back from the chain and settled.
      const next = await claimer.runOnce();
      expect(next).toMatchObject({ claims: [], settles: [expect.stringMatching(/^0x/)] });
      expect(await usdcBalance(app, payTo)).toBe(20_000n);
    } finally {
      failing.mockRestore();
      await app.close();
    }
  });
});

/** A claimer of its own on the app's database and chain, as the API restarted or another instance has: nothing in its memory. */
function claimerLike(app: TestApp): ClaimerService {
  return new ClaimerService(
    app.chain,
    app.config,
    app.database,
    app.app.get(ChannelStore),
    app.app.get(ClaimerHeartbeatStore),
    app.app.get(StuckAheadService),
  );
}

/**
 * A voucher site whose node refuses every broadcast while `refusing.on` (a node refusing a
 * transaction never sees it; the refused transactions' hashes in `refused`): claimRefused() runs the
 * claimer through the refusal of its first claim; onlyClaim() checks the receiver's one claim record is the run's, settled.
 */
async function refusedClaimSite(path: string) {
  const refused: Hex[] = [];
  const refusing = { on: false };
  const node = await startRpcRewriter(
    workerChain().rpcUrl,
    ({ result }) => result,
    ({ method, params }) => {
      if (!refusing.on || method !== 'eth_sendRawTransaction') return undefined;
      refused.push(keccak256(params[0] as Hex));
      return { code: -32000, message: 'insufficient funds for gas * price + value' };
    },
  );
  const { app, payTo, paidChannel } = await voucherSite({}, {}, node.url);
  await paidChannel(path, 100_000n, [10_000n]);
  const claimRefused = async () => {
    const claimer = app.app.get(ClaimerService);
    refusing.on = true;
    expect(await claimer.runOnce({ force: true })).toEqual({ claims: [], settles: [], skipped: false });
    refusing.on = false;
    expect(refused).toHaveLength(1);
    return claimer;
  };
  const onlyClaim = async (run: ClaimRun) =>
    expect(await app.database.prisma.channelClaim.findMany({ where: { receiver: payTo.toLowerCase() } })).toEqual([
      expect.objectContaining({ txHash: run.claims[0], amount: 10_000n, settleTxHash: run.settles[0] }),
    ]);
  const close = async () => {
    await app.close();
    await node.close();
  };
  return { app, payTo, refused, refusing, claimRefused, onlyClaim, close };
}

/** The claimer's claim of what `payTo` is owed, without its settle, as a run that stopped between the two leaves it: the claim's hash. */
async function claimOnly(app: TestApp, payTo: string): Promise<Hex> {
  const batch = app.chain.batchSettlement!;
  const [receiver, token] = [payTo.toLowerCase() as Hex, app.chain.usdc.toLowerCase() as Hex];
  const signer = { chainId: app.chain.chainId, escrow: batch.escrow, receiverAuthorizer: batch.authorizer.address };
  const channels = await app.app.get(ChannelStore).unclaimed(signer, receiver, token, 100);
  const stopped = { claims: [] as Hex[], settles: [] as Hex[], skipped: false };
  await app.app.get(ClaimerService)['claimChannels'](batch, receiver, token, channels, { force: true }, stopped);
  expect(stopped.claims).toHaveLength(1);
  return stopped.claims[0];
}

/**
 * An API whose claimer runs only when a test asks, with a batch-settlement site, and paidChannel():
 * a new funded payer's channel paying `totals` for pages under `path`, its deposit with the first.
 */
async function voucherSite(
  overrides: Partial<ReturnType<typeof loadConfig>['chain']['batchSettlement']> = {},
  chain: Partial<Omit<ReturnType<typeof loadConfig>['chain'], 'batchSettlement'>> = {},
  chainRpcUrl?: string,
) {
  const batchSettlement = {
    ...loadConfig({}).chain.batchSettlement,
    claimIntervalMs: 0,
    channelStateReuseMs: 0,
    ...overrides,
  };
  const app = await startTestApp({ isolateChain: true, chainRpcUrl, config: { chain: { ...chain, batchSettlement } } });
  const payTo = newWallet().address;
  const { site, publisher } = await pricedSite(app, payTo);
  await app.call('PATCH', `/v1/sites/${site.siteId}`, { body: { batch_settlement: true }, headers: publisher.auth });
  const paidChannel = async (path: string, deposit: bigint, totals: bigint[]) => {
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    await fundEth(app, payer.address);
    let channel: ReturnType<typeof testChannel> | undefined;
    for (const [i, total] of totals.entries()) {
      const offer = batchOffer(
        await app.call('POST', '/v1/gates', {
          body: { url: `${path}/${i}` },
          headers: { 'x-site-token': site.siteToken },
        }),
      );
      channel ??= testChannel(app, payer, offer.accepted);
      const response = await app.call('POST', `/v1/gates/${offer.id}/verify`, {
        body: { payment: await channel.payment(offer, total, i === 0 ? { deposit } : {}) },
      });
      expect(response.status === 200 ? 200 : response.body).toBe(200);
    }
    return { payer, channel: channel! };
  };
  /** The payer's withdrawal from its channel, started and finished on the escrow directly. */
  const withdrawal = (payer: ReturnType<typeof newWallet>, channel: ReturnType<typeof testChannel>) => {
    const call = (functionName: 'initiateWithdraw' | 'finalizeWithdraw', args: readonly unknown[]) =>
      payerCallsEscrow(app, payer, functionName, args);
    return {
      start: (amount: bigint) => call('initiateWithdraw', [channel.config, amount]),
      /** Finishes it once its delay is over (the chain's clock moved past it). */
      finishAfterDelay: async () => {
        await increaseTime(app.chain.rpcUrl, app.chain.batchSettlement!.withdrawDelaySeconds + 1);
        await call('finalizeWithdraw', [channel.config]);
      },
    };
  };
  return { app, payTo, site, paidChannel, withdrawal };
}
