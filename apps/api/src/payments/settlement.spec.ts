import { DEFAULT_CHAIN_ID, devPublicClient, devTestClient, devWalletClient } from '@crawlgate/devchain';
import { newWallet } from '../../test/test-agent';
import { testChainContext, workerChain } from '../../test/test-chain';
import { waitForReceipt } from './settlement';

/** Against this worker's anvil: the node's answers, and viem's reading of them, are the real ones. */
describe('waitForReceipt', () => {
  const { rpcUrl } = workerChain();
  const chain = testChainContext();
  const test = devTestClient(rpcUrl);
  const publicClient = devPublicClient(rpcUrl);

  it('answers null for a transaction another took the place of (same sender and nonce, higher fee), not the other’s receipt', async () => {
    // Two API instances sharing the relayer's key, or one reading a lagging nonce, replace each other's transactions.
    const sender = newWallet();
    await test.setBalance({ address: sender.address, value: 10n ** 18n });
    const wallet = devWalletClient(rpcUrl, DEFAULT_CHAIN_ID, sender);
    const nonce = await publicClient.getTransactionCount({ address: sender.address, blockTag: 'pending' });
    const gasPrice = await publicClient.getGasPrice();
    await test.setAutomine(false);
    try {
      const ours = await wallet.sendTransaction({ to: newWallet().address, value: 1n, nonce, gasPrice });
      const waiting = waitForReceipt(chain, ours, 10_000);
      // viem has read the transaction it waits for before the other replaces it.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const other = await wallet.sendTransaction({ to: sender.address, value: 0n, nonce, gasPrice: gasPrice * 2n });
      await test.mine({ blocks: 1 });
      expect((await publicClient.getTransactionReceipt({ hash: other })).status).toBe('success');
      expect(await waiting).toBeNull();
    } finally {
      await test.setAutomine(true);
    }
  }, 30_000);

  it('answers the receipt of the transaction itself', async () => {
    const sender = newWallet();
    await test.setBalance({ address: sender.address, value: 10n ** 18n });
    const hash = await devWalletClient(rpcUrl, DEFAULT_CHAIN_ID, sender).sendTransaction({
      to: newWallet().address,
      value: 1n,
    });
    const receipt = await waitForReceipt(chain, hash, 10_000);
    expect(receipt?.transactionHash).toBe(hash);
    expect(receipt?.status).toBe('success');
  });
});
