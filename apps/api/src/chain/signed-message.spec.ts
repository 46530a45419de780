import { devPublicClient, devTestClient } from '@crawlgate/devchain';
import { serializeErc6492Signature, type PublicClient } from 'viem';
import { startRpcRewriter, type RpcRefusal } from '../../test/rpc-rewriter';
import { deployBareTestWallet, newWallet } from '../../test/test-agent';
import { workerChain } from '../../test/test-chain';
import { MAX_SIGNATURE_CHECK_GAS, signedMessageBy } from './signed-message';

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

  const smartWallet = () => deployBareTestWallet(rpcUrl);

  it('asks the chain for a smart wallet (ERC-1271): its owner’s signature holds, a stranger’s does not', async () => {
    const { owner, wallet } = await smartWallet();
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

  it('answers "not signed" for junk viem cannot parse while the node is down: it asks no node, so no failure stands for it', async () => {
    const down = { publicClient: devPublicClient('http://127.0.0.1:1') } as never;
    const signature = junkSignatures['an ERC-8010 wrapper around nothing'];
    expect(await signedMessageBy(down, { address: newWallet().address, message, signature })).toBe(false);
  });

  it('answers unchecked for short bytes while the node is down: a contract wallet may take any bytes, only it can say', async () => {
    const down = { publicClient: devPublicClient('http://127.0.0.1:1') } as never;
    for (const signature of [junkSignatures['two bytes'], junkSignatures['no bytes']])
      expect(await signedMessageBy(down, { address: newWallet().address, message, signature })).toBe('unchecked');
  });

  it('answers unchecked, not "not signed", when the node fails the verification itself', async () => {
    // A wrapped (ERC-6492) signature goes to the chain at once; viem answers false when the node fails that call.
    const down = { publicClient: devPublicClient('http://127.0.0.1:1') } as never;
    const signature = `${await newWallet().signMessage({ message })}${'00'.repeat(32)}${'6492'.repeat(16)}` as const;
    expect(await signedMessageBy(down, { address: newWallet().address, message, signature })).toBe('unchecked');
  });

  // viem folds a failed eth_call into "false", whatever failed: a node's limit is no wallet's "no".
  const refusals: Record<string, RpcRefusal> = {
    'HTTP 429 (rate limited)': { httpStatus: 429 },
    'JSON-RPC -32005 (limit exceeded)': { code: -32005, message: 'limit exceeded' },
    'JSON-RPC -32603 (internal error)': { code: -32603, message: 'header not found' },
  };

  it.each(Object.entries(refusals))(
    'answers unchecked for a smart wallet’s valid signature when the node refuses eth_call with %s',
    async (_, refusal) => {
      const { owner, wallet } = await smartWallet();
      const limited = await startRpcRewriter(
        rpcUrl,
        ({ result }) => result,
        ({ method }) => (method === 'eth_call' ? refusal : undefined),
      );
      try {
        const chain = { publicClient: devPublicClient(limited.url) } as never;
        const signature = await owner.signMessage({ message });
        expect(await signedMessageBy(chain, { address: wallet, message, signature })).toBe('unchecked');
        const stranger = await newWallet().signMessage({ message });
        expect(await signedMessageBy(chain, { address: wallet, message, signature: stranger })).toBe('unchecked');
      } finally {
        await limited.close();
      }
    },
  );

  it('caps the gas of every verification it asks of the node: a wallet whose check loops burns no more', async () => {
    // Without a cap an eth_call runs to the node's own (anvil's 30M gas, 50M on some nodes), for any
    // address a stranger names and a "factory" of its choosing (ERC-6492).
    const { owner, wallet } = await smartWallet();
    const looping = newWallet().address;
    await devTestClient(rpcUrl).setCode({ address: looping, bytecode: '0x5b600056' }); // JUMPDEST PUSH1 0 JUMP
    const gasOfCalls: unknown[] = [];
    // Seen as asked (a call that runs out of gas is answered with an error, which no rewrite sees).
    const watching = await startRpcRewriter(
      rpcUrl,
      ({ result }) => result,
      ({ method, params }) => void (method === 'eth_call' && gasOfCalls.push((params[0] as { gas?: unknown }).gas)),
    );
    try {
      const chain = { publicClient: devPublicClient(watching.url) } as never;
      const own = await owner.signMessage({ message });
      expect(await signedMessageBy(chain, { address: wallet, message, signature: own })).toBe(true);
      const wrapped = serializeErc6492Signature({ address: looping, data: '0x', signature: own });
      expect(await signedMessageBy(chain, { address: newWallet().address, message, signature: wrapped })).toBe(false);
      expect(await signedMessageBy(chain, { address: looping, message, signature: '0x1234' })).toBe(false);
      expect(gasOfCalls.length).toBeGreaterThanOrEqual(3);
      expect(gasOfCalls).toEqual(gasOfCalls.map(() => `0x${MAX_SIGNATURE_CHECK_GAS.toString(16)}`));
    } finally {
      await watching.close();
    }
  });

  it('answers "not signed" when the wallet’s check halts within the gas cap (out of memory gas): the code’s answer, not the node’s failure', async () => {
    // Read as the node's failure (unchecked), a stranger's signature naming such code made a payer's
    // sign-in 503 and a non-payer's 402: one probe told a page bought.
    const halting = newWallet().address;
    await devTestClient(rpcUrl).setCode({ address: halting, bytecode: '0x621000006000fd' }); // reverts with 1 MB
    const { chain } = counted();
    const signature = await newWallet().signMessage({ message });
    expect(await signedMessageBy(chain, { address: halting, message, signature })).toBe(false);
  });

  it('answers "not signed" when the wallet itself reverts: a revert is the wallet’s answer, not the node’s failure', async () => {
    // An address whose code reverts on every call stands for a wallet refusing the signature by reverting.
    const reverting = newWallet().address;
    await devTestClient(rpcUrl).setCode({ address: reverting, bytecode: '0x60006000fd' });
    const { chain } = counted();
    const signature = await newWallet().signMessage({ message });
    expect(await signedMessageBy(chain, { address: reverting, message, signature })).toBe(false);
  });
});
