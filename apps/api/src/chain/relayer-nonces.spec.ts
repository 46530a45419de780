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
import { createRelayerNonces, type RelayerTurn } from './relayer-nonces';

/** Against this worker's anvil, with a key of its own: the node's answers are the real ones. */
describe('createRelayerNonces', () => {
  const { rpcUrl } = workerChain();
  const sender = newWallet();
  const wallet = devWalletClient(rpcUrl, DEFAULT_CHAIN_ID, sender);
  const chain = devPublicClient(rpcUrl);
  const to = newWallet().address;
  const pendingNonce = () => chain.getTransactionCount({ address: sender.address, blockTag: 'pending' });
  const transfer = (nonce: number) => wallet.sendTransaction({ to, value: 1n, nonce });
  const mined = async (hash: Hex) => (await chain.waitForTransactionReceipt({ hash })).status;
  /** One payee's turn: the broadcasts below queue as one payee's settlements do. */
  const TURN: RelayerTurn = { payee: to };
  let start: Hex;

  beforeAll(async () => {
    start = await snapshot(rpcUrl);
    await devTestClient(rpcUrl).setBalance({ address: sender.address, value: 10n ** 18n });
  });
  afterAll(() => revert(rpcUrl, start));

  it('gives overlapping broadcasts consecutive nonces, one broadcast at a time, all mined', async () => {
    const nonces = createRelayerNonces(pendingNonce);
    const first = await pendingNonce();
    let inFlight = 0;
    let most = 0;
    const sent = await Promise.all(
      Array.from({ length: 8 }, () =>
        nonces.send(async (nonce) => {
          most = Math.max(most, ++inFlight);
          try {
            return { nonce, hash: await transfer(nonce) };
          } finally {
            inFlight -= 1;
          }
        }, TURN),
      ),
    );
    expect(sent.map(({ nonce }) => nonce)).toEqual([0, 1, 2, 3, 4, 5, 6, 7].map((i) => first + i));
    expect(most).toBe(1);
    for (const { hash } of sent) expect(await mined(hash)).toBe('success');
  });

  it('does not use up the nonce of a failed broadcast: the ones queued behind it get it', async () => {
    const nonces = createRelayerNonces(pendingNonce);
    const first = await pendingNonce();
    const failed = nonces.send(async () => Promise.reject(new Error('socket hang up')), TURN);
    const next = [
      nonces.send(async (nonce) => ({ nonce, hash: await transfer(nonce) }), TURN),
      nonces.send(async (nonce) => ({ nonce, hash: await transfer(nonce) }), TURN),
    ];
    await expect(failed).rejects.toThrow('socket hang up');
    const sent = await Promise.all(next);
    expect(sent.map(({ nonce }) => nonce)).toEqual([first, first + 1]);
    for (const { hash } of sent) expect(await mined(hash)).toBe('success');
  });

  it('reuses the nonce of a transaction the chain lost instead of queueing behind the gap', async () => {
    const nonces = createRelayerNonces(pendingNonce);
    const beforeLoss = await snapshot(rpcUrl);
    const lost = await nonces.send(async (nonce) => ({ nonce, hash: await transfer(nonce) }), TURN);
    expect(await mined(lost.hash)).toBe('success');
    await revert(rpcUrl, beforeLoss);

    const sent = await nonces.send(async (nonce) => ({ nonce, hash: await transfer(nonce) }), TURN);
    expect(sent.nonce).toBe(lost.nonce);
    expect(await mined(sent.hash)).toBe('success');
  });

  it('moves past a nonce another sender on the same key took between the read and the broadcast', async () => {
    const nonces = createRelayerNonces(pendingNonce);
    const elsewhere = devWalletClient(rpcUrl, DEFAULT_CHAIN_ID, sender);
    const first = await pendingNonce();
    const tried: number[] = [];
    const hash = await nonces.send(async (nonce) => {
      tried.push(nonce);
      if (tried.length === 1) await elsewhere.sendTransaction({ to, value: 2n, nonce }); // gets there first: ours is "nonce too low"
      return transfer(nonce);
    }, TURN);
    expect(tried).toEqual([first, first + 1]);
    expect(await mined(hash)).toBe('success');
  });

  it('runs work at no new nonce in a turn of its own (a replacement at a pending nonce): no broadcast reads the count meanwhile', async () => {
    let insideTurn = false;
    const reads: boolean[] = [];
    const nonces = createRelayerNonces(
      async () => {
        reads.push(insideTurn);
        return pendingNonce();
      },
      (work) => work(),
    );
    const alone = nonces.alone(async () => {
      insideTurn = true;
      await new Promise((resolve) => setTimeout(resolve, 100));
      insideTurn = false;
      return 'replaced';
    }, 'claimer');
    const sent = nonces.send(async (nonce) => transfer(nonce), TURN);
    expect(await alone).toBe('replaced');
    expect(await mined(await sent)).toBe('success');
    expect(reads).toEqual([false]);
  });

  it('tries a refused nonce at most 3 times, and never retries other failures (the transaction may have landed)', async () => {
    const nonces = createRelayerNonces(pendingNonce);
    const tries = { taken: 0, known: 0 };
    await expect(
      nonces.send(async () => Promise.reject(new Error(`Details: nonce too low (${++tries.taken})`)), TURN),
    ).rejects.toThrow('nonce too low (3)');
    await expect(
      nonces.send(async () => Promise.reject(new Error(`Details: already known (${++tries.known})`)), TURN),
    ).rejects.toThrow('already known (1)');
    expect(tries).toEqual({ taken: 3, known: 1 });
  });

  it('sends the claimer’s broadcasts first, then one of each payee’s in turn', async () => {
    const nonces = createRelayerNonces(pendingNonce);
    const order: string[] = [];
    const turnOf = (name: string) => (name === 'claimer' ? 'claimer' : { payee: name });
    const send = (name: string) =>
      nonces.send(async (nonce) => {
        order.push(name);
        return transfer(nonce);
      }, turnOf(name));
    // The first goes at once; the rest wait behind it, in the order they asked.
    const sent = ['0xAA', '0xaa', '0xAA', '0xaa', '0xbb', '0xbb', 'claimer', '0xcc', 'claimer'].map(send);
    for (const hash of await Promise.all(sent)) expect(await mined(hash)).toBe('success');
    expect(order).toEqual(['0xAA', 'claimer', 'claimer', '0xaa', '0xbb', '0xcc', '0xAA', '0xbb', '0xaa']);
  });
});
