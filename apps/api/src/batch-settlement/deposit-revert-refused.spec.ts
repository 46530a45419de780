import { randomBytes } from 'node:crypto';
import { devTestClient } from '@crawlgate/devchain';
import { USDC_ABI } from '@crawlgate/core';
import { encodeFunctionData, type Hash } from 'viem';
import { batchSettlementSite } from '../../test/fixtures';
import { fundEth, fundUsdc, newWallet, walletOf } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { batchGate, testChannel } from '../../test/test-channel';
import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { RelayRefusalsStore } from '../payments/relay-refusals.store';
import { RelayerDepositsService } from './relayer-deposits.service';

/**
 * A relayer deposit the payer makes revert once its request stopped waiting is seen reverted
 * by the deposits' sweep (RelayerDepositsService), not by its request: the payer is refused all the
 * same (RelayRefusalsStore), as its request would have: the relayer paid its gas (review finding:
 * the sweep dropped the deposit and the payer's deposits were relayed as before).
 */
describe('a relayed deposit reverted after its request stopped waiting', () => {
  let db: TestDatabase;
  let app: TestApp;
  let depositing: TestApp;
  const masterKey = randomBytes(32);

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startTestApp({ database: db.database, masterKey, isolateChain: true });
    depositing = await startTestApp({
      database: db.database,
      masterKey,
      config: { chain: { settlementTimeoutMs: 1_500 } },
    });
  });
  afterAll(async () => {
    await devTestClient(app.chain.rpcUrl).setAutomine(true);
    await depositing.app.close();
    await app.close();
    await db.dispose();
  });

  it('refuses the payer whose relayed deposit reverted (the sweep saw it)', async () => {
    const test = devTestClient(app.chain.rpcUrl);
    const { site } = await batchSettlementSite(app, newWallet().address);
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    await fundEth(app, payer.address);
    const offer = await batchGate(depositing, site);
    const channel = testChannel(depositing, payer, offer.accepted);
    await test.setAutomine(false);
    const answer = await depositing.call('POST', `/v1/gates/${offer.id}/verify`, {
      body: { payment: await channel.payment(offer, 10_000n, { deposit: 50_000n }) },
    });
    expect(answer.status).toBe(503); // sent, not confirmed within the timeout
    const [row] = await db.database.sql.query<{ tx_hash: string }>('SELECT tx_hash FROM channel_deposits');
    // The payer empties its wallet ahead of the deposit (higher tip): the deposit reverts.
    const signed = await payer.signTransaction({
      type: 'eip1559',
      chainId: app.chain.chainId,
      nonce: 0,
      to: app.chain.usdc,
      data: encodeFunctionData({ abi: USDC_ABI, functionName: 'transfer', args: [newWallet().address, 960_000n] }),
      gas: 100_000n,
      maxPriorityFeePerGas: 100n * 10n ** 9n,
      maxFeePerGas: 200n * 10n ** 9n,
    });
    await walletOf(app, payer).sendRawTransaction({ serializedTransaction: signed });
    await test.mine({ blocks: 1 });
    await test.setAutomine(true);
    const receipt = await app.chain.publicClient.getTransactionReceipt({ hash: row.tx_hash as Hash });
    expect(receipt.status).toBe('reverted');

    await depositing.app.get(RelayerDepositsService).followOnTheirWay();
    expect(await db.database.sql.query('SELECT 1 FROM channel_deposits')).toEqual([]); // dropped as dead
    expect(await app.app.get(RelayRefusalsStore).isRefused(app.chain.chainId, payer.address)).toBe(true);
  }, 90_000);
});
