import { randomBytes } from 'node:crypto';
import {
  devTestClient,
  increaseTime,
  signAuthorization,
  signCancelAuthorization,
  testUsdcAbi,
  usdcDomain,
  type UsdcDomain,
} from '@crawlgate/devchain';
import { USDC_ABI } from '@crawlgate/core';
import { encodeFunctionData, type Address, type Hash, type Hex } from 'viem';
import { batchSettlementSite } from '../../test/fixtures';
import { fundEth, fundUsdc, newWallet, walletOf } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { batchGate, testChannel } from '../../test/test-channel';
import { GWEI } from '../../test/test-chain';
import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { RelayRefusalsStore } from '../payments/relay-refusals.store';
import { RelayerDepositsService } from './relayer-deposits.service';

/**
 * A relayer deposit that reverted once its request stopped waiting is seen by the deposits' sweep
 * (RelayerDepositsService), not by its request. Made to revert by its payer, the payer is refused
 * all the same (RelayRefusalsStore), as its request would have: the relayer paid its gas (review
 * finding: the sweep dropped it and the payer's deposits were relayed as before). Reverted because a
 * copy of it made the deposit first (the escrow's deposit is anyone's to call), nobody is refused
 * (review finding: anyone reading the mempool could get a payer refused for a day).
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

  /** A funded payer's first payment of a site's gate through `via`, with a deposit, sent with automine off. */
  async function depositSent(via: TestApp) {
    const { site } = await batchSettlementSite(app, newWallet().address);
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    await fundEth(app, payer.address);
    const offer = await batchGate(via, site);
    const channel = testChannel(via, payer, offer.accepted);
    await devTestClient(app.chain.rpcUrl).setAutomine(false);
    const answer = via.call('POST', `/v1/gates/${offer.id}/verify`, {
      body: { payment: await channel.payment(offer, 10_000n, { deposit: 50_000n }) },
    });
    return { payer, answer };
  }

  /** cancelAuthorization calldata of `payer`'s authorization `nonce`, signed by it. */
  const cancelCalldata = async (payer: ReturnType<typeof newWallet>, nonce: Hex) =>
    encodeFunctionData({
      abi: testUsdcAbi,
      functionName: 'cancelAuthorization',
      args: [
        payer.address,
        nonce,
        await signCancelAuthorization(payer, usdcDomain(app.chain.chainId, app.chain.usdc), payer.address, nonce),
      ],
    });

  /** A payer's deposit sent by the relayer and left pending (automine off) once its request answered 503. */
  async function depositLeftPending() {
    const sent = await depositSent(depositing);
    const { payer } = sent;
    const answer = await sent.answer;
    expect(answer.status).toBe(503); // sent, not confirmed within the timeout
    const [row] = await db.database.sql.query<{ tx_hash: string; authorization_nonce: string }>(
      'SELECT tx_hash, authorization_nonce FROM channel_deposits WHERE landed_at IS NULL',
    );
    return { payer, deposit: row.tx_hash as Hash, nonce: row.authorization_nonce as Hex };
  }

  /**
   * Sends `call` from `from` (its first transaction) with a higher tip than the pending deposit's,
   * mines it ahead of the deposit and the deposit after it; the deposit's receipt.
   */
  async function mineAhead(
    from: ReturnType<typeof newWallet>,
    call: { to: Address; data: Hex; gas: bigint },
    deposit: Hash,
  ) {
    const signed = await from.signTransaction({
      type: 'eip1559',
      chainId: app.chain.chainId,
      nonce: 0,
      ...call,
      maxPriorityFeePerGas: 100n * GWEI,
      maxFeePerGas: 200n * GWEI,
    });
    await walletOf(app, from).sendRawTransaction({ serializedTransaction: signed });
    const test = devTestClient(app.chain.rpcUrl);
    await test.mine({ blocks: 1 });
    await test.setAutomine(true);
    return app.chain.publicClient.getTransactionReceipt({ hash: deposit });
  }

  it('refuses the payer whose relayed deposit reverted (the sweep saw it)', async () => {
    const { payer, deposit } = await depositLeftPending();
    // The payer empties its wallet ahead of the deposit (higher tip): the deposit reverts.
    const emptying = {
      to: app.chain.usdc,
      data: encodeFunctionData({ abi: USDC_ABI, functionName: 'transfer', args: [newWallet().address, 960_000n] }),
      gas: 100_000n,
    };
    expect((await mineAhead(payer, emptying, deposit)).status).toBe('reverted');

    await depositing.app.get(RelayerDepositsService).followOnTheirWay();
    expect(await db.database.sql.query('SELECT 1 FROM channel_deposits WHERE landed_at IS NULL')).toEqual([]);
    expect(await app.app.get(RelayRefusalsStore).isRefused(app.chain.chainId, payer.address)).toBe(true);
  }, 90_000);

  it.each(['cancelAuthorization', 'a transfer of its own with the same nonce'])(
    'refuses the payer who spent the deposit’s authorization ahead of it (%s): no copy of the deposit made it',
    async (how) => {
      // Its nonce used, the revert was read as a copy's deposit: the payer burned nonce after nonce,
      // its funds never moving, the relayer paying each revert, and was never refused.
      const { payer, deposit, nonce } = await depositLeftPending();
      const data =
        how === 'cancelAuthorization'
          ? await cancelCalldata(payer, nonce)
          : await ownTransferWithNonce(payer, usdcDomain(app.chain.chainId, app.chain.usdc), nonce);
      expect((await mineAhead(payer, { to: app.chain.usdc, data, gas: 200_000n }, deposit)).status).toBe('reverted');

      await depositing.app.get(RelayerDepositsService).followOnTheirWay();
      expect(await db.database.sql.query('SELECT 1 FROM channel_deposits WHERE landed_at IS NULL')).toEqual([]);
      expect(await app.app.get(RelayRefusalsStore).isRefused(app.chain.chainId, payer.address)).toBe(true);
    },
    90_000,
  );

  it('refuses, on the request that sent it, the payer who cancelled the authorization ahead of its deposit', async () => {
    const { payer, answer: answering } = await depositSent(app);
    let rows: { tx_hash: string; authorization_nonce: string }[] = [];
    while (rows.length === 0) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      rows = await db.database.sql.query(
        'SELECT tx_hash, authorization_nonce FROM channel_deposits WHERE landed_at IS NULL AND payer = $1',
        [payer.address.toLowerCase()],
      );
    }
    const cancel = await cancelCalldata(payer, rows[0].authorization_nonce as Hex);
    const mined = await mineAhead(payer, { to: app.chain.usdc, data: cancel, gas: 200_000n }, rows[0].tx_hash as Hash);
    expect(mined.status).toBe('reverted');
    const answer = await answering;
    expect({ status: answer.status, reason: answer.body.reason }).toEqual({
      status: 402,
      reason: 'invalid_batch_settlement_evm_deposit_transaction_failed',
    });
    expect(await app.app.get(RelayRefusalsStore).isRefused(app.chain.chainId, payer.address)).toBe(true);
  }, 90_000);

  /** transferWithAuthorization calldata of 1 unit from `payer` to itself, spending `nonce`. */
  async function ownTransferWithNonce(payer: ReturnType<typeof newWallet>, domain: UsdcDomain, nonce: Hex) {
    const auth = {
      from: payer.address,
      to: payer.address,
      value: 1n,
      validAfter: 0n,
      validBefore: BigInt(Math.floor(Date.now() / 1000) + 3600),
      nonce,
    };
    const signature = await signAuthorization(payer, domain, auth);
    return encodeFunctionData({
      abi: testUsdcAbi,
      functionName: 'transferWithAuthorization',
      args: [auth.from, auth.to, auth.value, auth.validAfter, auth.validBefore, auth.nonce, signature],
    });
  }

  it('refuses nobody when a copy of the deposit, sent by a stranger, made it first', async () => {
    const { payer, deposit } = await depositLeftPending();
    const ours = await app.chain.publicClient.getTransaction({ hash: deposit });
    const stranger = newWallet();
    await fundEth(app, stranger.address);
    const copy = { to: ours.to!, data: ours.input, gas: ours.gas };
    expect((await mineAhead(stranger, copy, deposit)).status).toBe('reverted');

    await depositing.app.get(RelayerDepositsService).followOnTheirWay();
    expect(await db.database.sql.query('SELECT 1 FROM channel_deposits WHERE landed_at IS NULL')).toEqual([]);
    expect(await app.app.get(RelayRefusalsStore).isRefused(app.chain.chainId, payer.address)).toBe(false);
  }, 90_000);

  // Last: it moves the chain's clock an hour ahead of the wall clock, which authorizations are signed by.
  it('refuses nobody when the deposit was mined only after its authorization expired: the payer moved nothing', async () => {
    // Stuck behind the relayer's fees or its other transactions, a deposit can land past the
    // authorization's validBefore: the token refuses it, its nonce stays unused, and the payer was
    // refused for a day as if it had moved its funds.
    const { payer, deposit } = await depositLeftPending();
    await increaseTime(app.chain.rpcUrl, 3_600);
    const test = devTestClient(app.chain.rpcUrl);
    await test.mine({ blocks: 1 });
    await test.setAutomine(true);
    expect((await app.chain.publicClient.getTransactionReceipt({ hash: deposit })).status).toBe('reverted');

    await depositing.app.get(RelayerDepositsService).followOnTheirWay();
    expect(await db.database.sql.query('SELECT 1 FROM channel_deposits WHERE landed_at IS NULL')).toEqual([]);
    expect(await app.app.get(RelayRefusalsStore).isRefused(app.chain.chainId, payer.address)).toBe(false);
  }, 90_000);
});
