import { randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { devTestClient } from '@crawlgate/devchain';
import type { Hash } from 'viem';
import { batchSettlementSite } from '../../test/fixtures';
import { fundEth, fundUsdc, newWallet } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { batchGate, startWithdrawal, testChannel } from '../../test/test-channel';
import { endFeeSpike, GWEI, signedTransactionOf } from '../../test/test-chain';
import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { loadConfig } from '../config/config';
import { ClaimerService } from './claimer.service';

/**
 * A relayer deposit (any payer can have the relayer send one) is recorded once signed, like every
 * other relayer transaction: left under the base fee, it holds every later relayer nonce, the urgent
 * claim's included, however high the claim's own fees, so the urgent claim lifts it too
 * (StuckAheadService), its replacement recorded. On the worker's anvil, automine off.
 */
describe('an urgent claim behind a relayer deposit left under the base fee', () => {
  let db: TestDatabase;
  let app: TestApp;
  let claiming: TestApp;
  const PRICE = 10_000n;
  const DEPOSIT = 50_000n;
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

  const test = () => devTestClient(app.chain.rpcUrl);
  const transaction = (hash: string) => app.chain.publicClient.getTransaction({ hash: hash as Hash });
  const receipt = (hash: string) =>
    app.chain.publicClient.getTransactionReceipt({ hash: hash as Hash }).catch(() => null);
  const verify = (on: TestApp, gateId: string, payment: unknown) =>
    on.call('POST', `/v1/gates/${gateId}/verify`, { body: { payment } });
  const late = () => new Date(Date.now() + (loadConfig({}).chain.batchSettlement.withdrawDelaySeconds * 1000 * 3) / 4);

  it('is mined in the next block: what holds it back goes up to the urgent maximum', async () => {
    const { site } = await batchSettlementSite(app, newWallet().address);
    // The honest payer: a page charged, withdrawing it all: its claim is urgent once late.
    const honest = newWallet();
    await fundUsdc(app, honest.address, '1');
    await fundEth(app, honest.address);
    const offer = await batchGate(app, site);
    const channel = testChannel(app, honest, offer.accepted);
    expect((await verify(app, offer.id, await channel.payment(offer, PRICE, { deposit: DEPOSIT }))).status).toBe(200);
    await startWithdrawal(app, honest, channel.config, DEPOSIT);

    // The attacker: a deposit the relayer sends for it, left pending.
    const attacker = newWallet();
    await fundUsdc(app, attacker.address, '1');
    await test().setAutomine(false);
    // Fees a little up already: the deposit is priced within the normal maximum, at some 7 gwei.
    await test().setNextBlockBaseFeePerGas({ baseFeePerGas: 7n * GWEI });
    await test().mine({ blocks: 1 });
    const offer2 = await batchGate(claiming, site);
    const channel2 = testChannel(claiming, attacker, offer2.accepted);
    const sent = await verify(claiming, offer2.id, await channel2.payment(offer2, PRICE, { deposit: DEPOSIT }));
    expect(sent.status).toBe(503);
    const pendingBlock = await app.chain.publicClient.getBlock({ blockTag: 'pending', includeTransactions: true });
    const deposit = pendingBlock.transactions.find(
      (tx) => tx.from.toLowerCase() === app.chain.relayer.account.address.toLowerCase(),
    )!;
    expect(deposit).toBeDefined();
    // The base fee rises past it (anvil drops it from its pool while the block is mined: sent again).
    await test().dropTransaction({ hash: deposit.hash });
    await test().setNextBlockBaseFeePerGas({ baseFeePerGas: deposit.maxFeePerGas! });
    await test().mine({ blocks: 1 });
    await app.chain.publicClient.sendRawTransaction({ serializedTransaction: signedTransactionOf(deposit) });
    const spike = deposit.maxFeePerGas! + 1n * GWEI;
    await test().setNextBlockBaseFeePerGas({ baseFeePerGas: spike });
    expect((await transaction(deposit.hash)).blockNumber).toBeNull();

    const said: string[] = [];
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation((m: unknown) => void said.push(`warn ${m}`));
    const error = jest
      .spyOn(Logger.prototype, 'error')
      .mockImplementation((m: unknown) => void said.push(`error ${m}`));
    const run = await claiming.app.get(ClaimerService).runOnce({ now: late() });
    warn.mockRestore();
    error.mockRestore();
    // The deposit is recorded: lifted, not passed over with a warning.
    expect(said.filter((line) => line.includes('none the API recorded'))).toEqual([]);

    expect(run.claims).toHaveLength(1);
    const claim = await transaction(run.claims[0]);
    expect(claim.nonce).toBe(deposit.nonce + 1);
    expect(claim.maxFeePerGas!).toBeGreaterThan(spike);
    // The deposit went up with it, its replacement written down as the deposit's, at its nonce.
    const recorded = await db.database.sql.query<{ tx_hash: string }>(
      'SELECT tx_hash FROM channel_deposits WHERE nonce = $1::int',
      [deposit.nonce],
    );
    const lifted = recorded.map((row) => row.tx_hash).filter((hash) => hash !== deposit.hash);
    expect(recorded.map((row) => row.tx_hash)).toContain(deposit.hash);
    expect(lifted).toHaveLength(1);
    await test().mine({ blocks: 1 });
    expect((await receipt(lifted[0]))?.status).toBe('success');
    expect((await receipt(run.claims[0]))?.status).toBe('success');
  }, 90_000);
});
