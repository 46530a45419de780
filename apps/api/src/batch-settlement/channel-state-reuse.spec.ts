import { BATCH_REASONS, BATCH_SETTLEMENT_ABI } from '@crawlgate/core';
import { devTestClient, devWalletClient, increaseTime, signErc3009Deposit, usdcDomain } from '@crawlgate/devchain';
import { randomBytes, randomUUID } from 'node:crypto';
import { loadConfig } from '../config/config';
import { batchSettlementSite, type TestSite } from '../../test/fixtures';
import { fundEth, fundUsdc, newWallet, usdcBalance } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { batchOffer, escrowRead, testChannel, type BatchOffer } from '../../test/test-channel';
import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { depositCalldata } from '../chain/escrow';
import { ClaimerHeartbeatStore } from './claimer-heartbeat.store';
import { ClaimerService } from './claimer.service';

/*
 * Vouchers judged on a channel state this API read a moment ago (CHANNEL_STATE_REUSE_MS), as an
 * attacker would use that moment: a withdrawal started just after a voucher, a refund landed through
 * another API instance, a deposit made on chain behind the API's back. A remembered state only ever
 * takes a voucher a fresh read would take but for a withdrawal started within the window, and the
 * escrow pays such a withdrawal only after the claimer has collected every voucher taken.
 */
const REUSE_MS = 1_500;
const PRICE = 10_000n; // the site's default 0.01 USD

describe('vouchers judged on a recent channel state', () => {
  let db: TestDatabase;
  let app: TestApp;
  let other: TestApp; // a second API instance on the same database and chain
  let site: TestSite;
  const payTo = newWallet().address;
  const masterKey = randomBytes(32);
  // The claimer runs (every minute, so never during these tests): reuse leans on it.
  const batchSettlement = {
    ...loadConfig({}).chain.batchSettlement,
    claimIntervalMs: 60_000,
    channelStateReuseMs: REUSE_MS,
  };
  const config = { chain: { batchSettlement } };
  // The second instance runs no claimer: it reads the chain for every voucher.
  const noClaimer = { chain: { batchSettlement: { ...batchSettlement, claimIntervalMs: 0 } } };

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startTestApp({ isolateChain: true, database: db.database, masterKey, config });
    other = await startTestApp({ database: await db.connectAnother(), masterKey, config: noClaimer });
    ({ site } = await batchSettlementSite(app, payTo));
  }, 60_000);
  afterAll(async () => {
    await other?.close();
    await app?.close();
    await db?.dispose();
  }, 60_000);

  const gate = async (on: TestApp = app): Promise<BatchOffer> =>
    batchOffer(
      await on.call('POST', '/v1/gates', {
        body: { url: `/article/${randomUUID()}` },
        headers: { 'x-site-token': site.siteToken },
      }),
    );
  const verify = (offer: BatchOffer, payment: unknown, on: TestApp = app) =>
    on.call('POST', `/v1/gates/${offer.id}/verify`, { body: { payment } });
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  /** A payer whose channel holds `deposit` and has paid its first page through `app`. */
  async function openChannel(deposit: bigint) {
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    await fundEth(app, payer.address);
    const first = await gate();
    const channel = testChannel(app, payer, first.accepted);
    expect((await verify(first, await channel.payment(first, PRICE, { deposit }))).status).toBe(200);
    let charged = PRICE;
    /** The next page through `on`, with a voucher for what was charged plus its price. */
    const nextPage = async (on: TestApp = app) => {
      const offer = await gate(on);
      const response = await verify(offer, await channel.payment(offer, charged + PRICE), on);
      if (response.status === 200) charged += PRICE;
      return response;
    };
    return { payer, channel, nextPage };
  }

  it('reads the chain once for a run of vouchers on one channel, then again once the window is over', async () => {
    const { nextPage } = await openChannel(100_000n);
    const reads = jest.spyOn(app.chain.publicClient, 'call');
    try {
      for (let page = 0; page < 4; page++) expect((await nextPage()).status).toBe(200);
      const withinWindow = reads.mock.calls.length;
      await sleep(REUSE_MS + 100);
      expect((await nextPage()).status).toBe(200);
      // The deposit's answer left a fresh state: the four pages read nothing; the one after the window read the channel.
      expect(withinWindow).toBe(0);
      expect(reads.mock.calls.length).toBe(1); // one eth_call (the escrow's multicall) for the channel's three reads
    } finally {
      reads.mockRestore();
    }
  }, 60_000);

  it('reads the chain for every voucher in an instance that runs no claimer', async () => {
    const { nextPage } = await openChannel(100_000n);
    const reads = jest.spyOn(other.chain.publicClient, 'call');
    try {
      for (let page = 0; page < 3; page++) expect((await nextPage(other)).status).toBe(200);
      expect(reads.mock.calls.length).toBe(3);
    } finally {
      reads.mockRestore();
    }
  }, 60_000);

  it('takes no voucher on money a refund through another instance returned, though this one read the channel before it', async () => {
    const { channel, nextPage } = await openChannel(50_000n);
    expect((await nextPage()).status).toBe(200); // charged 20,000; `app` remembers a balance of 50,000
    const offer = await gate(other);
    const asked = await channel.payment(offer, 20_000n);
    const refunded = await verify(offer, { ...asked, payload: { ...asked.payload, type: 'refund' } }, other);
    expect(refunded.body).toMatchObject({ status: 'refunded', refund_amount: '30000' });

    // The channel now holds exactly what was charged: the next page's voucher fits only the remembered balance.
    const page = await nextPage();
    expect(page.status).toBe(402);
    expect(page.body.reason).toBe(BATCH_REASONS.cumulativeExceedsBalance);
    expect(page.body.detail).toMatch(/20000 spendable/);
  }, 60_000);

  it('sees a deposit made on chain behind its back at once: a voucher above the remembered balance reads the chain again', async () => {
    const { payer, channel, nextPage } = await openChannel(20_000n);
    expect((await nextPage()).status).toBe(200); // charged 20,000 of 20,000
    const batch = app.chain.batchSettlement!;
    const salt = BigInt(Date.now());
    const signed = await signErc3009Deposit({
      payer,
      tokenDomain: usdcDomain(app.chain.chainId, app.chain.usdc),
      collector: batch.collector,
      channelId: channel.channelId,
      amount: 30_000n,
      salt,
    });
    const wallet = devWalletClient(app.chain.rpcUrl, app.chain.chainId, payer);
    const topUp = await wallet.sendTransaction({
      to: batch.escrow,
      data: depositCalldata(batch, channel.config, 30_000n, { ...signed, salt }),
    });
    expect((await app.chain.publicClient.waitForTransactionReceipt({ hash: topUp })).status).toBe('success');
    expect((await nextPage()).status).toBe(200);
  }, 60_000);

  it('reuses nothing in an instance whose claimer has not yet finished a run with gas for a claim', async () => {
    const { nextPage } = await openChannel(100_000n);
    const relayer = app.chain.relayer.account.address;
    const gas = await app.chain.publicClient.getBalance({ address: relayer });
    // Started with a relayer out of gas: its claimer's first run (at start) has nothing due, but could not claim.
    await devTestClient(app.chain.rpcUrl).setBalance({ address: relayer, value: 0n });
    const fresh = await startTestApp({ database: await db.connectAnother(), masterKey, config });
    try {
      await sleep(500); // the run at start is over
      // Gas again (no voucher is taken while the relayer cannot pay for a claim); the next run is a minute away.
      await devTestClient(app.chain.rpcUrl).setBalance({ address: relayer, value: gas });
      const reads = jest.spyOn(fresh.chain.publicClient, 'call');
      for (let page = 0; page < 3; page++) expect((await nextPage(fresh)).status).toBe(200);
      expect(reads.mock.calls.length).toBe(3);
      reads.mockRestore();
    } finally {
      await devTestClient(app.chain.rpcUrl).setBalance({ address: relayer, value: gas });
      await fresh.close();
    }
  }, 60_000);

  it('stops reusing states once its claimer fails to finish its runs: a withdrawal is then seen at the next voucher', async () => {
    // Opened first: the deposit is relayed by the same account as the claims below, and a claim sent
    // from another instance at the same moment could take the deposit's nonce.
    const { payer, channel, nextPage } = await openChannel(50_000n);
    // An instance whose claimer runs every 300 ms and finds every voucher due.
    const failing = await startTestApp({
      database: await db.connectAnother(),
      masterKey,
      config: { chain: { batchSettlement: { ...batchSettlement, claimIntervalMs: 300, claimMinMicros: 1n } } },
    });
    const relayer = failing.chain.relayer.account.address;
    const gas = await failing.chain.publicClient.getBalance({ address: relayer });
    try {
      // Its vouchers' reading of the relayer's gas is taken now, and judges them RELAYER_GAS_READ_MS.
      expect((await nextPage(failing)).status).toBe(200);
      // The relayer has no gas left: every claim, so every claimer run, fails from now on (a voucher is due).
      await devTestClient(failing.chain.rpcUrl).setBalance({ address: relayer, value: 0n });
      expect((await nextPage(failing)).status).toBe(200);
      await sleep(1_500);
      // Another instance's claimer keeps up (it just finished a run), so vouchers are still taken:
      // what must stop reusing states is this instance's own claimer failing.
      await failing.app.get(ClaimerHeartbeatStore).record(0);
      expect((await nextPage(failing)).status).toBe(200); // read now, and remembered
      const wallet = devWalletClient(failing.chain.rpcUrl, failing.chain.chainId, payer);
      const started = await wallet.writeContract({
        address: failing.chain.batchSettlement!.escrow,
        abi: BATCH_SETTLEMENT_ABI,
        functionName: 'initiateWithdraw',
        args: [channel.config, 30_000n],
      });
      await failing.chain.publicClient.waitForTransactionReceipt({ hash: started });
      // Within the window, but no claimer would collect it in time: the chain is read, the withdrawal seen.
      const refused = await nextPage(failing);
      expect([refused.status, refused.body.reason]).toEqual([402, BATCH_REASONS.cumulativeExceedsBalance]);
    } finally {
      await devTestClient(failing.chain.rpcUrl).setBalance({ address: relayer, value: gas });
      await failing.close();
    }
  }, 60_000);

  // Last: it moves the chain's clock a withdraw delay ahead of the wall clock, which deposits are signed by.
  it('lets no withdrawal take back what vouchers charged: one taken just after it started is claimed before the escrow pays it out, and none once the window is over', async () => {
    const { payer, channel, nextPage } = await openChannel(50_000n);
    expect((await nextPage()).status).toBe(200); // charged 20,000; this read is now remembered
    const wallet = devWalletClient(app.chain.rpcUrl, app.chain.chainId, payer);
    const escrow = app.chain.batchSettlement!.escrow;
    const started = await wallet.writeContract({
      address: escrow,
      abi: BATCH_SETTLEMENT_ABI,
      functionName: 'initiateWithdraw',
      args: [channel.config, 50_000n],
    });
    await app.chain.publicClient.waitForTransactionReceipt({ hash: started });

    // Within the window the withdrawal is not seen yet: the page is served on money still in the channel...
    const taken = await nextPage();
    expect(taken.status).toBe(200);
    // ...and once the window is over, no voucher draws on money that may leave.
    await sleep(REUSE_MS + 100);
    const refused = await nextPage();
    expect([refused.status, refused.body.reason]).toEqual([402, BATCH_REASONS.cumulativeExceedsBalance]);

    // The claimer, seeing the withdrawal, claims every voucher taken at once; the payer gets back only the rest.
    // (A run of an instance an earlier test closed may still hold the claimer's lock a moment: this one waits its turn.)
    let run = await app.app.get(ClaimerService).runOnce();
    for (const deadline = Date.now() + 30_000; run.skipped && Date.now() < deadline; await sleep(200))
      run = await app.app.get(ClaimerService).runOnce();
    expect(run).toMatchObject({ skipped: false, claims: [expect.any(String)] });
    const [, totalClaimed] = await escrowRead<readonly [bigint, bigint]>(app, 'channels', channel.channelId);
    expect(totalClaimed).toBe(30_000n);
    await increaseTime(app.chain.rpcUrl, app.chain.batchSettlement!.withdrawDelaySeconds + 1);
    const finished = await wallet.writeContract({
      address: escrow,
      abi: BATCH_SETTLEMENT_ABI,
      functionName: 'finalizeWithdraw',
      args: [channel.config],
    });
    await app.chain.publicClient.waitForTransactionReceipt({ hash: finished });
    expect(await usdcBalance(app, payer.address)).toBe(1_000_000n - 30_000n);
  }, 60_000);
});
