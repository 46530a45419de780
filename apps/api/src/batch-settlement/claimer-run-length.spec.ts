import { encodeFunctionData, zeroAddress as ZERO_ADDRESS } from 'viem';
import { BATCH_SETTLEMENT_ABI } from '@crawlgate/core';
import { increaseTime } from '@crawlgate/devchain';
import { batchSettlementSite, type TestSite } from '../../test/fixtures';
import { fundEth, fundUsdc, newWallet } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { workerChain } from '../../test/test-chain';
import { batchGate, payerCallsEscrow, startWithdrawal, testChannel } from '../../test/test-channel';
import { startRpcRewriter, type RpcRewriter } from '../../test/rpc-rewriter';
import { loadConfig, type AppConfig } from '../config/config';
import { ChannelStore } from './channel.store';
import { ClaimerHeartbeatStore } from './claimer-heartbeat.store';
import { ClaimerService } from './claimer.service';
import { StuckAheadService } from './stuck-ahead.service';

/*
 * helper-408's F2: a claimer run visited every receiver in the database's order, read every queued
 * channel of each from the node, and wrote its heartbeat only at its end. Vouchers are taken only
 * while a run finished within three claim intervals (someoneKeepsUp), so a run made long by many
 * receivers due at once (a claim and a settle each, a receipt wait for both on a real chain) or by
 * thousands of small channels turned every voucher of every publisher away, and a receiver whose
 * payer was withdrawing waited behind all of them. Attacked as the load would: receivers many, slow
 * receipts, small channels.
 */

const PRICE = 10_000n;
const DEPOSIT = 100_000n;

describe("the claimer's run", () => {
  let app: TestApp;
  let node: RpcRewriter | undefined;
  afterEach(async () => {
    await app?.close();
    await node?.close();
    node = undefined;
  });

  /** An API on `chainRpcUrl` whose own claimer runs only when asked; `claimMinMicros`: what makes a receiver due by size. */
  const start = async (claimMinMicros: bigint, chainRpcUrl?: string) => {
    const { batchSettlement } = loadConfig({}).chain;
    app = await startTestApp({
      isolateChain: true,
      chainRpcUrl,
      config: { chain: { batchSettlement: { ...batchSettlement, claimIntervalMs: 0, claimMinMicros } } },
    });
  };

  /** A new receiver's batch-settlement site, and one payer's channel paying it one page (a deposit of DEPOSIT). */
  const receiverPaidOnce = async () => {
    const payTo = newWallet().address;
    const { site } = await batchSettlementSite(app, payTo);
    return { payTo: payTo.toLowerCase(), site, ...(await payPages(app, site, [PRICE])) };
  };

  /** A receiver paid once (receiverPaidOnce) whose payer asks back a unit and never finalizes it: a withdrawal taking nothing charged. */
  const receiverWithdrawingAUnit = async () => {
    const owing = await receiverPaidOnce();
    await startWithdrawal(app, owing.payer, owing.channel.config, 1n);
    return owing;
  };

  /** After the delay, that unit taken out and everything else asked back: a withdrawal taking what was charged. */
  const withdrawRestAfterUnit = async (owing: Awaited<ReturnType<typeof receiverPaidOnce>>) => {
    await increaseTime(app.chain.rpcUrl, owing.channel.config.withdrawDelay + 1);
    await payerCallsEscrow(app, owing.payer, 'finalizeWithdraw', [owing.channel.config]);
    await startWithdrawal(app, owing.payer, owing.channel.config, DEPOSIT - 1n);
  };

  /** Another page of `paid`'s site paid on its channel, at running total `total`: the verify's status. */
  const payAgain = async (paid: Awaited<ReturnType<typeof receiverPaidOnce>>, total: bigint) => {
    const offer = await batchGate(app, paid.site);
    const answer = await app.call('POST', `/v1/gates/${offer.id}/verify`, {
      body: { payment: await paid.channel.payment(offer, total) },
    });
    return answer.status;
  };

  /** The receiver each of these claim transactions paid, in their order. */
  const receiversOf = async (claims: readonly string[]) => {
    const rows = await app.database.prisma.channelClaim.findMany({ where: { txHash: { in: [...claims] } } });
    return claims.map((hash) => rows.find((row) => row.txHash === hash)?.receiver);
  };

  it('visits a receiver whose payer is withdrawing before every other, then the others oldest voucher first', async () => {
    await start(PRICE);
    const first = await receiverPaidOnce();
    const second = await receiverPaidOnce();
    // Last in the database's order, and its payer takes back what it was charged unless a claim comes first.
    const withdrawing = await receiverPaidOnce();
    await startWithdrawal(app, withdrawing.payer, withdrawing.channel.config, DEPOSIT);

    const run = await app.app.get(ClaimerService).runOnce();
    expect(await receiversOf(run.claims)).toEqual([withdrawing.payTo, first.payTo, second.payTo]);
  });

  it('stops visiting receivers with nothing withdrawing once it has run half its interval: the others go first next run, and its heartbeat is written each time', async () => {
    node = await slowBroadcasts();
    await start(PRICE, node.url);
    const receivers = [await receiverPaidOnce(), await receiverPaidOnce(), await receiverPaidOnce()];
    // Runs every 600 ms, as the instance that claims: a budget of 300 ms, less than one transaction takes.
    const claimer = claimerRunningEvery(app, 600);
    const heartbeats = app.app.get(ClaimerHeartbeatStore);

    const heartbeatAt = async () =>
      (
        await app.database.sql.query<{ at: string }>(
          `SELECT completed_at::text AS at FROM job_heartbeats WHERE job LIKE 'claimer/%'`,
        )
      )[0]?.at;
    const runs: string[][] = [];
    for (const _ of receivers) {
      const before = await heartbeatAt();
      const run = await claimer.runOnce();
      expect(await heartbeatAt()).not.toBe(before);
      runs.push((await receiversOf(run.claims)) as string[]);
    }
    expect(runs).toEqual(receivers.map(({ payTo }) => [payTo]));
    // That claimer's heartbeat says it runs every 600 ms, so it counts for 1.8 s: the app's own
    // (only when asked) is what the vouchers below are judged by.
    await heartbeats.record(0);

    // Asked for by hand (force), a run has no budget: it claims everything at once.
    await payPages(app, receivers[0].site, [PRICE]);
    await payPages(app, receivers[1].site, [PRICE]);
    expect((await claimer.runOnce({ force: true })).claims).toHaveLength(2);
  }, 60_000);

  it("reads from the node none of a receiver's channels while the database shows them not due (too little, none overdue, none withdrawing); once overdue they are read and claimed", async () => {
    await start(loadConfig({}).chain.batchSettlement.claimMinMicros);
    const { site } = await batchSettlementSite(app, newWallet().address);
    for (let i = 0; i < 3; i++) await payPages(app, site, [PRICE]);
    const reads = countChannelReads(app);
    try {
      const claimer = app.app.get(ClaimerService);
      expect((await claimer.runOnce()).claims).toEqual([]);
      expect(reads.count).toBe(0);

      // Past every deadline (CLAIM_MAX_AGE_SECONDS): read, and claimed at once.
      const later = new Date(Date.now() + 2 * 3_600_000);
      expect((await claimer.runOnce({ now: later })).claims).toHaveLength(1);
      expect(reads.count).toBeGreaterThanOrEqual(3);
    } finally {
      reads.restore();
    }
  });

  it("with the escrow's withdrawals unreadable, still reads the queue: a payer withdrawing what it was charged is claimed though the database shows too little to be due", async () => {
    // Every search of the escrow's log is refused: the run cannot tell who is withdrawing from events.
    node = await startRpcRewriter(
      workerChain().rpcUrl,
      ({ result }) => result,
      ({ method }) => (method === 'eth_getLogs' ? { code: -32603, message: 'logs unavailable' } : undefined),
    );
    await start(loadConfig({}).chain.batchSettlement.claimMinMicros, node.url);
    const owing = await receiverPaidOnce();
    await startWithdrawal(app, owing.payer, owing.channel.config, DEPOSIT);

    const run = await app.app.get(ClaimerService).runOnce();
    expect(await receiversOf(run.claims)).toEqual([owing.payTo]);
  });

  it("with the escrow's withdrawals unreadable, has no time budget: every receiver is visited, as its queue is the only place a withdrawal shows", async () => {
    node = await slowBroadcasts(({ method }) =>
      method === 'eth_getLogs' ? { code: -32603, message: 'logs unavailable' } : undefined,
    );
    await start(PRICE, node.url);
    const receivers = [await receiverPaidOnce(), await receiverPaidOnce(), await receiverPaidOnce()];
    const run = await claimerRunningEvery(app, 600).runOnce();
    expect(await receiversOf(run.claims)).toEqual(receivers.map(({ payTo }) => payTo));
  }, 60_000);

  it('spends no time on receivers the database shows not due: one due behind many small ones is claimed in the first run', async () => {
    // Each read of a receiver's unsettled total takes the node 200 ms.
    const receiversRead = encodeFunctionData({
      abi: BATCH_SETTLEMENT_ABI,
      functionName: 'receivers',
      args: [ZERO_ADDRESS, ZERO_ADDRESS],
    }).slice(0, 10);
    node = await startRpcRewriter(
      workerChain().rpcUrl,
      ({ result }) => result,
      () => undefined,
      ({ method, params }) =>
        method === 'eth_call' && (params[0] as { data?: string; input?: string }).data?.startsWith(receiversRead)
          ? 200
          : 0,
    );
    await start(PRICE * 2n, node.url);
    // Three receivers with a page each, under CLAIM_MIN_MICROS and not overdue: nothing to do for them.
    for (let i = 0; i < 3; i++) await receiverPaidOnce();
    const due = await receiverPaidOnce();
    await payPages(app, due.site, [PRICE]);

    const run = await claimerRunningEvery(app, 600).runOnce();
    expect(await receiversOf(run.claims)).toEqual([due.payTo]);
  }, 60_000);

  it('reads a withdrawal that takes nothing charged once, not at every run (its receiver is not put past the budget for it again), nor again for vouchers within what it leaves (all a voucher can be); again for a new withdrawal', async () => {
    await start(loadConfig({}).chain.batchSettlement.claimMinMicros);
    // A unit, never finalized: what was charged stays claimable, so the claim is neither urgent nor due.
    const owing = await receiverWithdrawingAUnit();
    const claimer = app.app.get(ClaimerService);
    const reads = countChannelReads(app);
    try {
      expect((await claimer.runOnce()).claims).toEqual([]);
      expect(reads.count).toBeGreaterThan(0);
      const judged = reads.count;
      expect((await claimer.runOnce()).claims).toEqual([]);
      expect(reads.count).toBe(judged);

      // Charged more, within what the withdrawal leaves: a free voucher a run must not buy a read each.
      expect(await payAgain(owing, 2n * PRICE)).toBe(200);
      // The voucher's own judgement read the channel: counted from here.
      const charged = reads.count;
      expect((await claimer.runOnce()).claims).toEqual([]);
      expect(reads.count).toBe(charged);

      // The unit taken out after the delay and all the rest asked back: a new event, read, and claimed.
      await withdrawRestAfterUnit(owing);
      expect(await receiversOf((await claimer.runOnce()).claims)).toEqual([owing.payTo]);
    } finally {
      reads.restore();
    }
  });

  it('keeps a harmless verdict past a restart, and for another instance: thousands of 1-unit withdrawals are not all read again after each deploy', async () => {
    await start(loadConfig({}).chain.batchSettlement.claimMinMicros);
    await receiverWithdrawingAUnit();
    expect((await app.app.get(ClaimerService).runOnce()).claims).toEqual([]); // judged harmless
    const reads = countChannelReads(app);
    try {
      // A claimer with nothing in its memory: this API restarted, or another instance's.
      expect((await claimerRunningEvery(app, 0).runOnce()).claims).toEqual([]);
      expect(reads.count).toBe(0);
    } finally {
      reads.restore();
    }
  });

  it("moves a channel's unclaimed date to its oldest voucher a claim did not reach: a voucher taken while the claim was on its way does not leave the channel dated by vouchers claimed (overdue, then late, at every run)", async () => {
    // Armed once the first page is paid (its deposit is a broadcast too): the claim's broadcast.
    const broadcast = { seen: () => {} };
    node = await startRpcRewriter(
      workerChain().rpcUrl,
      ({ result }) => result,
      () => undefined,
      ({ method }) => {
        if (method !== 'eth_sendRawTransaction') return 0;
        broadcast.seen();
        return 1_000;
      },
    );
    await start(PRICE, node.url);
    const paid = await receiverPaidOnce();
    const channelId = paid.channel.channelId.toLowerCase();
    const unclaimedSince = async () =>
      (await app.database.prisma.paymentChannel.findUniqueOrThrow({ where: { channelId } })).unclaimedSince;

    const broadcasting = new Promise<void>((resolve) => (broadcast.seen = resolve));
    const run = app.app.get(ClaimerService).runOnce();
    await broadcasting; // the claim of the first page is on its way
    const beforeSecond = Date.now();
    expect(await payAgain(paid, 2n * PRICE)).toBe(200);
    expect((await run).claims).toHaveLength(1);
    expect((await unclaimedSince())!.getTime()).toBeGreaterThanOrEqual(beforeSecond - 5);
  }, 60_000);

  it('judges a withdrawal harmless only on the chain as of the log it read: a node behind it (showing an older 1-unit withdrawal) does not hide the full one that followed', async () => {
    await start(loadConfig({}).chain.batchSettlement.claimMinMicros);
    const owing = await receiverWithdrawingAUnit();
    const claimer = app.app.get(ClaimerService);
    expect((await claimer.runOnce()).claims).toEqual([]); // judged harmless
    const before = await app.chain.publicClient.getBlockNumber({ cacheTime: 0 });

    // The unit is taken out after the delay, and everything else is asked back.
    await withdrawRestAfterUnit(owing);

    // The next run's reads of the channel at the latest block reach a node still before all that.
    const client = app.chain.publicClient;
    const call = client.call.bind(client);
    const escrow = app.chain.batchSettlement!.escrow.toLowerCase();
    const lagging = jest
      .spyOn(client, 'call')
      .mockImplementation(((args: Parameters<typeof client.call>[0]) =>
        call(
          (args.to?.toLowerCase() === escrow && args.blockNumber === undefined
            ? { ...args, blockNumber: before }
            : args) as never,
        )) as typeof client.call);
    try {
      await claimer.runOnce();
    } finally {
      lagging.mockRestore();
    }
    // The node caught up: the withdrawal taking what was charged is claimed ahead of it.
    expect(await receiversOf((await claimer.runOnce()).claims)).toEqual([owing.payTo]);
  });

  it('leaves an overdue receiver for lack of time like the others (first among them) until its oldest voucher is half its withdraw delay old; from then on no time limit leaves it', async () => {
    node = await slowBroadcasts();
    await start(PRICE, node.url);
    const receivers = [await receiverPaidOnce(), await receiverPaidOnce(), await receiverPaidOnce()];
    const claimer = claimerRunningEvery(app, 600);
    const hoursOn = (hours: number) => new Date(Date.now() + hours * 3_600_000);
    // Past CLAIM_MAX_AGE_SECONDS (an hour): overdue, but far from half the 24-hour delay.
    const overdue = await claimer.runOnce({ now: hoursOn(2) });
    expect(await receiversOf(overdue.claims)).toEqual([receivers[0].payTo]);
    // Half the delay on: a payer could finalize a withdrawal the log never showed within the other half.
    const late = await claimer.runOnce({ now: hoursOn(13) });
    expect(await receiversOf(late.claims)).toEqual([receivers[1].payTo, receivers[2].payTo]);
  }, 60_000);

  it('does not count toward a receiver being due a channel pushed behind the queue (read as holding no more than was claimed): it is read again at its time, not at every run', async () => {
    await start(PRICE);
    const paid = await receiverPaidOnce();
    const store = app.app.get(ChannelStore);
    const channelId = paid.channel.channelId.toLowerCase();
    // A claim put its voucher in calldata (then reverted, say), and a node behind the chain said the
    // channel holds nothing: read again in an hour.
    await store.markPublished([{ channelId, total: PRICE }]);
    await store.markClaimed(channelId, 0n, { balance: 0n, charged: PRICE, readAgainAfterSeconds: 3_600 });
    const reads = countChannelReads(app);
    try {
      expect((await app.app.get(ClaimerService).runOnce()).claims).toEqual([]);
      expect(reads.count).toBe(0);
    } finally {
      reads.restore();
    }
  });

  it("brings a channel pushed behind the queue (read as holding nothing more) back to its new voucher's date: that voucher's age deadline runs from when it was taken", async () => {
    await start(loadConfig({}).chain.batchSettlement.claimMinMicros);
    const paid = await receiverPaidOnce();
    const channelId = paid.channel.channelId.toLowerCase();
    const unclaimedSince = async () =>
      (await app.database.prisma.paymentChannel.findUniqueOrThrow({ where: { channelId } })).unclaimedSince!;
    // A node behind the chain said the channel holds nothing: read again in an hour.
    await app.app
      .get(ChannelStore)
      .markClaimed(channelId, 0n, { balance: 0n, charged: PRICE, readAgainAfterSeconds: 3_600 });
    expect((await unclaimedSince()).getTime()).toBeGreaterThan(Date.now() + 3_000_000);

    expect(await payAgain(paid, 2n * PRICE)).toBe(200);
    expect((await unclaimedSince()).getTime()).toBeLessThanOrEqual(Date.now());
  });
});

/**
 * A node that passes each transaction the relayer sends on 400 ms late (a claim and its settle: 0.8
 * s a receiver, past a budget of 300 ms), refusing what `refuse` refuses.
 */
function slowBroadcasts(refuse: Parameters<typeof startRpcRewriter>[2] = () => undefined) {
  return startRpcRewriter(
    workerChain().rpcUrl,
    ({ result }) => result,
    refuse,
    ({ method }) => (method === 'eth_sendRawTransaction' ? 400 : 0),
  );
}

/** A new funded payer's channel on `site`, paying one page per running total of `totals` (its deposit with the first). */
async function payPages(app: TestApp, site: TestSite, totals: bigint[]) {
  const payer = newWallet();
  await fundUsdc(app, payer.address, '1');
  await fundEth(app, payer.address);
  let channel: ReturnType<typeof testChannel> | undefined;
  for (const [i, total] of totals.entries()) {
    const offer = await batchGate(app, site);
    channel ??= testChannel(app, payer, offer.accepted);
    const paid = await app.call('POST', `/v1/gates/${offer.id}/verify`, {
      body: { payment: await channel.payment(offer, total, i === 0 ? { deposit: DEPOSIT } : {}) },
    });
    expect(paid.status === 200 ? 200 : paid.body).toBe(200);
  }
  return { payer, channel: channel! };
}

/** A claimer on the app's database and chain, as the instance that runs one every `intervalMs` has (the app's own runs only when asked). */
function claimerRunningEvery(app: TestApp, intervalMs: number): ClaimerService {
  const chain = app.config.chain;
  const config: AppConfig = {
    ...app.config,
    chain: { ...chain, batchSettlement: { ...chain.batchSettlement, claimIntervalMs: intervalMs } },
  };
  return new ClaimerService(
    app.chain,
    config,
    app.database,
    app.app.get(ChannelStore),
    app.app.get(ClaimerHeartbeatStore),
    app.app.get(StuckAheadService),
  );
}

/** Counts the app's reads of a channel's state from the escrow (readChannel: one multicall each), passing each on. */
function countChannelReads(app: TestApp) {
  const client = app.chain.publicClient;
  const escrow = app.chain.batchSettlement!.escrow.toLowerCase();
  const multicall = encodeFunctionData({ abi: BATCH_SETTLEMENT_ABI, functionName: 'multicall', args: [[]] }).slice(
    0,
    10,
  );
  const reads = { count: 0, restore: () => spy.mockRestore() };
  const call = client.call.bind(client);
  const spy = jest.spyOn(client, 'call').mockImplementation(((args: Parameters<typeof client.call>[0]) => {
    if (args.to?.toLowerCase() === escrow && args.data?.startsWith(multicall)) reads.count++;
    return call(args);
  }) as typeof client.call);
  return reads;
}
