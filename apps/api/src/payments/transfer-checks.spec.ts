import { transferProofMessage, USDC_ABI } from '@crawlgate/core';
import { devPublicClient } from '@crawlgate/devchain';
import {
  encodeAbiParameters,
  encodeEventTopics,
  parseSignature,
  serializeCompactSignature,
  signatureToCompactSignature,
  type Hex,
} from 'viem';
import { startRpcRewriter, type RpcRewriter } from '../../test/rpc-rewriter';
import { deployBareTestWallet, newWallet } from '../../test/test-agent';
import { workerChain } from '../../test/test-chain';
import { PaymentRejected } from './payment-rejected';
import { checkPayerSignature, movedTransfers, transferSignedFor, transfersTaken } from './transfer-checks';

const gateRef = 'gate_ref_1';
const hash = `0x${'ab'.repeat(32)}` as const;

/** checkPayerSignature against this worker's anvil, through a node that refuses every eth_call (a rate limit). */
describe('checkPayerSignature', () => {
  let limited: RpcRewriter;

  beforeAll(async () => {
    limited = await startRpcRewriter(
      workerChain().rpcUrl,
      ({ result }) => result,
      ({ method }) => (method === 'eth_call' ? { code: -32005, message: 'limit exceeded' } : undefined),
    );
  });
  afterAll(() => limited.close());

  const chainThrough = (url: string) => ({ publicClient: devPublicClient(url) }) as never;
  const compact = (signature: Hex) => serializeCompactSignature(signatureToCompactSignature(parseSignature(signature)));
  const proofBy = (signer: ReturnType<typeof newWallet>) =>
    signer.signMessage({ message: transferProofMessage(gateRef, hash) });

  it('takes an EOA payer’s EIP-2098 64-byte proof by local recovery while the node limits eth_call', async () => {
    const payer = newWallet();
    const signature = compact(await proofBy(payer));
    await expect(
      checkPayerSignature(chainThrough(limited.url), gateRef, hash, payer.address, signature),
    ).resolves.toBeUndefined();
  });

  it('refuses a stranger’s 64-byte proof with 402 while the node answers', async () => {
    const signature = compact(await proofBy(newWallet()));
    await expect(
      checkPayerSignature(chainThrough(workerChain().rpcUrl), gateRef, hash, newWallet().address, signature),
    ).rejects.toBeInstanceOf(PaymentRejected);
  });

  it('answers 503, never a pass, for a stranger’s 64-byte proof while the node limits eth_call', async () => {
    const signature = compact(await proofBy(newWallet()));
    await expect(
      checkPayerSignature(chainThrough(limited.url), gateRef, hash, newWallet().address, signature),
    ).rejects.toMatchObject({ status: 503 });
  });
});

describe('transferSignedFor', () => {
  const { rpcUrl } = workerChain();

  it('finds an honest smart wallet’s transfer behind a co-payer whose check the node cannot answer', async () => {
    // A co-payer (in a public bundle, anyone's) whose check the node refuses (a rate limit on that
    // call): unchecked, which must not hold up the next payer's. (A contract whose check halts, out
    // of gas or of memory gas, is the contract's "no", not a node that cannot answer.)
    const { owner, wallet: honest } = await deployBareTestWallet(rpcUrl);
    const coPayer = (await deployBareTestWallet(rpcUrl)).wallet;
    const refusing = await startRpcRewriter(
      rpcUrl,
      ({ result }) => result,
      ({ method, params }) =>
        method === 'eth_call' && JSON.stringify(params).toLowerCase().includes(coPayer.slice(2).toLowerCase())
          ? { code: -32005, message: 'limit exceeded' }
          : undefined,
    );
    try {
      const candidates = [
        { payer: coPayer.toLowerCase() as Hex, logIndex: 0 },
        { payer: honest.toLowerCase() as Hex, logIndex: 1 },
      ];
      const chain = { publicClient: devPublicClient(refusing.url) } as never;
      const signature = await owner.signMessage({ message: transferProofMessage(gateRef, hash) });
      await expect(
        transferSignedFor(chain, gateRef, hash, candidates, new Set(), new Set(), signature),
      ).resolves.toEqual(candidates[1]);
      // With no payer whose check holds, the one that could not be checked makes it a 503, not a 402.
      const stranger = await newWallet().signMessage({ message: transferProofMessage(gateRef, hash) });
      await expect(
        transferSignedFor(chain, gateRef, hash, candidates, new Set(), new Set(), stranger),
      ).rejects.toMatchObject({ status: 503 });
    } finally {
      await refusing.close();
    }
  });
});

describe('transfersTaken', () => {
  const usdc = '0x00000000000000000000000000000000000000aa' as const;
  const [payer, payTo, other] = [newWallet().address, newWallet().address, newWallet().address];
  const transfer = (from: Hex, to: Hex, value: bigint) => ({
    address: usdc,
    topics: encodeEventTopics({ abi: USDC_ABI, eventName: 'Transfer', args: { from, to } }),
    data: encodeAbiParameters([{ type: 'uint256' }], [value]),
  });
  /** A receipt whose logs start at `first` in their block. */
  const receipt = (first: number, ...logs: ReturnType<typeof transfer>[]) => ({
    logs: logs.map((log, i) => ({ ...log, logIndex: first + i })) as never,
  });
  const recorded = (transferLogIndex: number, from: Hex = payer) => ({
    asset: usdc,
    payer: from.toLowerCase(),
    payTo: payTo.toLowerCase(),
    amount: 10_000n,
    transferLogIndex,
  });

  it('finds each recorded transfer where it is now: mined again after a reorg, at another index', () => {
    const paid = transfer(payer, payTo, 10_000n);
    const row = recorded(0);
    expect(transfersTaken(receipt(0, paid), [row])).toEqual(new Map([[0, row]]));
    expect(transfersTaken(receipt(3, paid), [row])).toEqual(new Map([[3, row]]));
  });

  it('takes each of identical transfers once, those still at their index first', () => {
    const paid = transfer(payer, payTo, 10_000n);
    // Recorded at 0 and 2 before; now at 1 and 2: the one at 2 stays, the other is found at 1.
    const [moved, still] = [recorded(0), recorded(2)];
    const taken = transfersTaken(receipt(1, paid, paid), [moved, still]);
    expect(taken).toEqual(
      new Map([
        [2, still],
        [1, moved],
      ]),
    );
    // A third recorded payment finds none left.
    expect(transfersTaken(receipt(1, paid, paid), [recorded(0), recorded(2), recorded(5)])).toBe('changed');
  });

  it("places an authorization's payment where its nonce was used, before any other is matched by what it moved", () => {
    const paid = transfer(payer, payTo, 10_000n);
    // Two of one payer's authorizations at one price: interchangeable by what they moved. The one
    // recorded at 2 (its Transfer before a reorg) is not taken for the authorization settled there now.
    const [authorization, proof] = [
      { ...recorded(0), id: 'a' },
      { ...recorded(2), id: 'p' },
    ];
    const taken = transfersTaken(receipt(1, paid, paid), [proof, authorization], (row) =>
      row === authorization ? 2 : undefined,
    );
    expect(taken).toEqual(
      new Map([
        [2, authorization],
        [1, proof],
      ]),
    );
    expect(movedTransfers(taken as Map<number, typeof proof>)).toEqual([
      { id: 'a', transferLogIndex: 2 },
      { id: 'p', transferLogIndex: 1 },
    ]);
    // Its nonce used nowhere in the receipt, or where another's was: the transaction ran otherwise.
    expect(transfersTaken(receipt(1, paid), [authorization], () => null)).toBe('changed');
    expect(transfersTaken(receipt(1, paid), [authorization, { ...authorization, id: 'b' }], () => 1)).toBe('changed');
  });

  it("never takes another payer's, amount's or payee's transfer for a recorded one", () => {
    const others = receipt(
      0,
      transfer(other, payTo, 10_000n),
      transfer(payer, payTo, 9_999n),
      transfer(payer, other, 10_000n),
    );
    expect(transfersTaken(others, [recorded(0)])).toBe('changed');
    expect(transfersTaken(others, [recorded(1)])).toBe('changed');
    expect(transfersTaken(others, [])).toEqual(new Map());
  });
});
