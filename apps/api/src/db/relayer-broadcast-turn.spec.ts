import {
  DEFAULT_CHAIN_ID,
  devPublicClient,
  devTestClient,
  devWalletClient,
  revert,
  snapshot,
} from '@crawlgate/devchain';
import type { Hex } from 'viem';
import { newWallet } from '../../test/test-agent';
import { workerChain } from '../../test/test-chain';
import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { createRelayerNonces, type RelayerTurn } from '../chain/relayer-nonces';
import type { Database } from './database';
import { relayerBroadcastTurn } from './relayer-broadcast-turn';

const GWEI = 1_000_000_000n;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Two API instances share the relayer's key, each with its own queue of broadcasts. One that read
 * the pending count while the other was between its own read and its send took the same nonce,
 * and a node takes a transaction at a taken nonce as a replacement when its fees are a tenth
 * higher (a newer estimate, an urgent claim): the first instance's settlement was never mined.
 */
describe('the relayer’s broadcasts across API instances on one database', () => {
  const { rpcUrl } = workerChain();
  const sender = newWallet();
  const wallet = devWalletClient(rpcUrl, DEFAULT_CHAIN_ID, sender);
  const chain = devPublicClient(rpcUrl);
  const test = devTestClient(rpcUrl);
  const to = newWallet().address;
  const pendingNonce = () => chain.getTransactionCount({ address: sender.address, blockTag: 'pending' });
  const TURN: RelayerTurn = { payee: to };
  const transferAt = (nonce: number, maxFeePerGas: bigint) =>
    wallet.sendTransaction({ to, value: 1n, nonce, maxFeePerGas, maxPriorityFeePerGas: maxFeePerGas / 2n });
  let db: TestDatabase;
  let other: Database;
  let start: Hex;

  beforeAll(async () => {
    db = await createTestDatabase();
    other = await db.connectAnother();
    start = await snapshot(rpcUrl);
    await test.setBalance({ address: sender.address, value: 10n ** 18n });
  });
  afterAll(async () => {
    await test.setAutomine(true);
    await revert(rpcUrl, start);
    await db.dispose();
  });

  it('gives each instance’s broadcast a nonce of its own, whatever their fees, and every one is mined', async () => {
    await test.setAutomine(false);
    const first = createRelayerNonces(pendingNonce, relayerBroadcastTurn(db.database, 5_000));
    let secondRead!: () => void;
    const secondHasRead = new Promise<void>((resolve) => (secondRead = resolve));
    const second = createRelayerNonces(
      async () => {
        const nonce = await pendingNonce();
        secondRead();
        return nonce;
      },
      relayerBroadcastTurn(other, 5_000),
    );
    let firstSent!: () => void;
    const firstHasSent = new Promise<void>((resolve) => (firstSent = resolve));

    // The first instance is between its read and its send (signing, recording the hash) when the
    // second reads; the second sends after it, a newer estimate's higher fees.
    const sent = await Promise.all([
      first.send(async (nonce) => {
        await Promise.race([secondHasRead, sleep(300)]);
        const hash = await transferAt(nonce, 2n * GWEI);
        firstSent();
        return { nonce, hash };
      }, TURN),
      second.send(async (nonce) => {
        await Promise.race([firstHasSent, sleep(300)]);
        return { nonce, hash: await transferAt(nonce, 4n * GWEI) };
      }, TURN),
    ]);
    await test.mine({ blocks: 1 });

    expect(new Set(sent.map(({ nonce }) => nonce)).size).toBe(2);
    for (const { hash } of sent) expect((await chain.getTransactionReceipt({ hash })).status).toBe('success');
  });
});
