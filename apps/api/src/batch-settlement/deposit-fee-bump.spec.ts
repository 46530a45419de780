import { randomBytes } from 'node:crypto';
import { devTestClient } from '@crawlgate/devchain';
import type { Hash } from 'viem';
import { batchSettlementSite } from '../../test/fixtures';
import { fundUsdc, newWallet } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { batchGate, escrowRead, testChannel } from '../../test/test-channel';
import { endFeeSpike } from '../../test/test-chain';
import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { minimumReplacementFee } from '../chain/fee-bump';
import { RelayerDepositsService } from './relayer-deposits.service';

/**
 * A relayer deposit stuck under a fee spike (automine off, the next block's base fee raised above
 * what it offered) holds every later relayer transaction behind its nonce: the background sweep
 * re-prices it at the routine maximum, as it does refunds, and the request still waiting for it
 * takes the mined replacement as its deposit, then charges the voucher against the channel read after.
 */
describe('relayer deposits stuck under a fee spike', () => {
  let db: TestDatabase;
  let app: TestApp;
  let depositing: TestApp;
  const PRICE = 10_000n;
  const DEPOSIT = 50_000n;
  const masterKey = randomBytes(32);

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startTestApp({ database: db.database, masterKey, isolateChain: true });
    // Its requests wait for their deposit; its sweep re-prices at once.
    depositing = await startTestApp({
      database: db.database,
      masterKey,
      config: {
        chain: {
          settlementTimeoutMs: 30_000,
          feeBump: { afterSeconds: 0, maxFeePerGas: 10n ** 12n, urgentMaxFeePerGas: 10n ** 12n },
        },
      },
    });
  });
  afterAll(async () => {
    await endFeeSpike(app.chain);
    await depositing.app.close();
    await app.close();
    await db.dispose();
  });

  const test = () => devTestClient(app.chain.rpcUrl);
  const transaction = (hash: string) => app.chain.publicClient.getTransaction({ hash: hash as Hash });
  const recorded = () =>
    db.database.sql.query<{ tx_hash: string; nonce: number; landed_at: Date | null; channel_id: string }>(
      'SELECT tx_hash, nonce, landed_at, channel_id FROM channel_deposits ORDER BY created_at',
    );
  const sweep = () => depositing.app.get(RelayerDepositsService).followOnTheirWay();

  /** The relayer's transaction in the pending block, once the request has sent it. */
  async function pendingDeposit() {
    const relayer = app.chain.relayer.account.address.toLowerCase();
    for (let tries = 0; tries < 200; tries++) {
      const block = await app.chain.publicClient.getBlock({ blockTag: 'pending', includeTransactions: true });
      const sent = block.transactions.find((tx) => tx.from.toLowerCase() === relayer);
      if (sent) return sent;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('no deposit was sent');
  }

  it('is re-priced at its nonce by the sweep; the request waiting for it takes the replacement mined', async () => {
    const { site } = await batchSettlementSite(app, newWallet().address);
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    const offer = await batchGate(depositing, site);
    const channel = testChannel(depositing, payer, offer.accepted);
    await test().setAutomine(false);
    const answer = depositing.call('POST', `/v1/gates/${offer.id}/verify`, {
      body: { payment: await channel.payment(offer, PRICE, { deposit: DEPOSIT }) },
    });

    const stuck = await pendingDeposit();
    // Written down once signed, before its broadcast: its hash, nonce and channel.
    expect(await recorded()).toEqual([
      { tx_hash: stuck.hash, nonce: stuck.nonce, landed_at: null, channel_id: channel.channelId },
    ]);
    await test().setNextBlockBaseFeePerGas({ baseFeePerGas: stuck.maxFeePerGas! * 3n });

    await sweep();
    const rows = await recorded();
    expect(rows.map((row) => row.nonce)).toEqual([stuck.nonce, stuck.nonce]);
    const replacedBy = rows[1].tx_hash as Hash;
    const replacement = await transaction(replacedBy);
    expect(replacement).toMatchObject({ nonce: stuck.nonce, to: stuck.to, input: stuck.input, gas: stuck.gas });
    expect(replacement.maxFeePerGas).toBeGreaterThanOrEqual(minimumReplacementFee(stuck.maxFeePerGas!));
    expect(await transaction(stuck.hash).catch(() => null)).toBeNull();

    await test().mine({ blocks: 1 });
    await test().setAutomine(true);
    const paid = await answer;
    expect(paid.status).toBe(200);
    expect(paid.body.batch_settlement).toMatchObject({
      deposit_tx_hash: replacedBy,
      deposit_amount: DEPOSIT.toString(),
      charged_amount: PRICE.toString(),
    });
    const [balance] = await escrowRead<readonly [bigint, bigint]>(app, 'channels', channel.channelId);
    expect(balance).toBe(DEPOSIT);

    // The next sweep records the replacement landed and drops the hash that never will.
    await sweep();
    expect((await recorded()).map((row) => [row.tx_hash, row.landed_at !== null])).toEqual([[replacedBy, true]]);
  }, 90_000);
});
