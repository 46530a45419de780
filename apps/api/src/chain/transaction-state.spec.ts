import { devTestClient, revert, snapshot } from '@crawlgate/devchain';
import { keccak256, toHex } from 'viem';
import { testChainConfig, testChainContext } from '../../test/test-chain';
import { relayerNonceUsed, sentTransactionFate } from './transaction-state';

/**
 * A relayer nonce counts as used only once the transaction that took it is as deep as the chain's
 * confirmations: a shallower one a reorg can take back, and a transaction of ours the node has
 * forgotten could then still land at that nonce (judged `dead` and dropped, it would land unrecorded).
 */
describe('a relayer nonce used, as deep as the confirmations', () => {
  const chain = testChainContext();
  const deep = testChainContext(testChainConfig({ confirmations: 2 }));
  let saved: Awaited<ReturnType<typeof snapshot>>;

  beforeAll(async () => {
    saved = await snapshot(chain.rpcUrl);
  });
  afterAll(async () => {
    await revert(chain.rpcUrl, saved);
  });

  it('is used one block deep with one confirmation, and two deep with two', async () => {
    const address = chain.relayer.account.address;
    const nonce = await chain.publicClient.getTransactionCount({ address, blockTag: 'pending' });
    // Mined at once (automine): the nonce is taken in the newest block.
    const hash = await chain.relayer.sendTransaction({ to: address, value: 0n, nonce });
    await chain.publicClient.waitForTransactionReceipt({ hash });
    const forgotten = { txHash: keccak256(toHex(`forgotten ${nonce}`)), nonce };

    expect(await relayerNonceUsed(chain, nonce)).toBe(true);
    expect(await sentTransactionFate(chain, forgotten)).toBe('dead');
    expect(await relayerNonceUsed(deep, nonce)).toBe(false);
    expect(await sentTransactionFate(deep, forgotten)).toBe('unknown');

    await devTestClient(chain.rpcUrl).mine({ blocks: 1 });
    expect(await relayerNonceUsed(deep, nonce)).toBe(true);
    expect(await sentTransactionFate(deep, forgotten)).toBe('dead');
  });
});
