import {
  DEFAULT_CHAIN_ID,
  devPublicClient,
  devTestClient,
  devWalletClient,
  testWalletAbi,
  testWalletBytecode,
} from '@crawlgate/devchain';
import type { PublicClient } from 'viem';
import { newWallet } from '../../test/test-agent';
import { workerChain } from '../../test/test-chain';
import { signedMessageBy } from './signed-message';

/** Against this worker's anvil, with the node's calls counted per method. */
describe('signedMessageBy', () => {
  const { rpcUrl } = workerChain();
  const message = 'a challenge';

  function counted() {
    const calls: Record<string, number> = {};
    const client = devPublicClient(rpcUrl);
    const publicClient = new Proxy(client, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls[String(name)] = (calls[String(name)] ?? 0) + 1;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    }) as PublicClient;
    return { chain: { publicClient } as never, calls };
  }

  it('takes an address’s own signature with no call to the node', async () => {
    const owner = newWallet();
    const { chain, calls } = counted();
    const signature = await owner.signMessage({ message });
    expect(await signedMessageBy(chain, { address: owner.address, message, signature })).toBe(true);
    expect(calls).toEqual({});
  });

  it('refuses a stranger’s signature for an address with no code after a code read, never asking the chain to verify', async () => {
    const payer = newWallet();
    const { chain, calls } = counted();
    let asked = 0;
    for (let i = 0; i < 2; i++) {
      const signature = await newWallet().signMessage({ message });
      expect(
        await signedMessageBy(chain, { address: payer.address, message, signature }, async () => void asked++),
      ).toBe(false);
    }
    expect({ calls, asked }).toEqual({ calls: { getCode: 2 }, asked: 2 });
  });

  it('reads nothing of the chain once the caller’s bound refuses', async () => {
    const { chain, calls } = counted();
    const signature = await newWallet().signMessage({ message });
    const refused = new Error('bound spent');
    await expect(
      signedMessageBy(chain, { address: newWallet().address, message, signature }, () => Promise.reject(refused)),
    ).rejects.toBe(refused);
    expect(calls).toEqual({});
  });

  it('asks the chain for a smart wallet (ERC-1271): its owner’s signature holds, a stranger’s does not', async () => {
    const owner = newWallet();
    await devTestClient(rpcUrl).setBalance({ address: owner.address, value: 10n ** 18n });
    const hash = await devWalletClient(rpcUrl, DEFAULT_CHAIN_ID, owner).deployContract({
      abi: testWalletAbi,
      bytecode: testWalletBytecode,
      args: [owner.address],
    } as never);
    const wallet = (await devPublicClient(rpcUrl).waitForTransactionReceipt({ hash })).contractAddress!;
    const { chain } = counted();
    let asked = 0;
    const before = async () => void asked++;
    const own = await owner.signMessage({ message });
    expect(await signedMessageBy(chain, { address: wallet, message, signature: own }, before)).toBe(true);
    const stranger = await newWallet().signMessage({ message });
    expect(await signedMessageBy(chain, { address: wallet, message, signature: stranger }, before)).toBe(false);
    expect(asked).toBe(2);
  });

  it('answers unchecked when the node cannot tell whether the address has code', async () => {
    const { chain } = { chain: { publicClient: devPublicClient('http://127.0.0.1:1') } as never };
    const signature = await newWallet().signMessage({ message });
    expect(await signedMessageBy(chain, { address: newWallet().address, message, signature })).toBe('unchecked');
  });

  // Junk anyone can send: a signature that viem fails to parse before (or instead of) asking the node.
  const junkSignatures = {
    'an ERC-8010 wrapper around nothing': `0x${'00'.repeat(40)}${'8010'.repeat(16)}`,
    'an ERC-6492 wrapper around nothing': `0x${'ab'.repeat(10)}${'6492'.repeat(16)}`,
    'two bytes': '0x1234',
    'no bytes': '0x',
  } as const;

  it.each(Object.entries(junkSignatures))(
    'answers "not signed" for %s while the node answers',
    async (_, signature) => {
      const { chain } = counted();
      expect(await signedMessageBy(chain, { address: newWallet().address, message, signature })).toBe(false);
    },
  );

  it('answers unchecked for junk viem cannot parse while the node is down: its failure is not a "no"', async () => {
    const down = { publicClient: devPublicClient('http://127.0.0.1:1') } as never;
    const signature = junkSignatures['an ERC-8010 wrapper around nothing'];
    expect(await signedMessageBy(down, { address: newWallet().address, message, signature })).toBe('unchecked');
  });

  it('answers unchecked, not "not signed", when the node fails the verification itself', async () => {
    // A wrapped (ERC-6492) signature goes to the chain at once; viem answers false when the node fails that call.
    const down = { publicClient: devPublicClient('http://127.0.0.1:1') } as never;
    const signature = `${await newWallet().signMessage({ message })}${'00'.repeat(32)}${'6492'.repeat(16)}` as const;
    expect(await signedMessageBy(down, { address: newWallet().address, message, signature })).toBe('unchecked');
  });
});
