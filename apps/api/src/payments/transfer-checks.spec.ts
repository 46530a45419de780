import { transferProofMessage } from '@crawlgate/core';
import { devPublicClient } from '@crawlgate/devchain';
import { parseSignature, serializeCompactSignature, signatureToCompactSignature, type Hex } from 'viem';
import { startRpcRewriter, type RpcRewriter } from '../../test/rpc-rewriter';
import { newWallet } from '../../test/test-agent';
import { workerChain } from '../../test/test-chain';
import { PaymentRejected } from './payment-rejected';
import { checkPayerSignature } from './transfer-checks';

/** checkPayerSignature against this worker's anvil, through a node that refuses every eth_call (a rate limit). */
describe('checkPayerSignature', () => {
  const gateRef = 'gate_ref_1';
  const hash = `0x${'ab'.repeat(32)}` as const;
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
