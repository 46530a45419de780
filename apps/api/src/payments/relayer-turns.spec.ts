/*
 * The relayer broadcasts one transaction at a time (its nonces). A payee whose own payers flood it
 * with settlements (a price below the gas costs it nothing: the money comes back to it) must not
 * hold another payee's settlement behind the whole flood. Against the local chain through a node
 * that takes 150 ms to accept each broadcast, so the relayer's queue fills as it would on a public
 * chain's RPC.
 */

import { newWallet, paymentsOfOnePayer } from '../../test/test-agent';
import { startRpcRewriter, type RpcRewriter } from '../../test/rpc-rewriter';
import { siteAtPrice } from '../../test/fixtures';
import { workerChain } from '../../test/test-chain';
import { startTestApp, type TestApp } from '../../test/test-app';

describe('the relayer’s turns', () => {
  let app: TestApp;
  let node: RpcRewriter;
  let broadcasts = 0;
  beforeAll(async () => {
    node = await startRpcRewriter(
      workerChain().rpcUrl,
      ({ result }) => result,
      () => undefined,
      ({ method }) => (method === 'eth_sendRawTransaction' ? (broadcasts++, 150) : 0),
    );
    app = await startTestApp({ isolateChain: true, chainRpcUrl: node.url });
  });
  afterAll(async () => {
    await app.close();
    await node.close();
  });

  it('takes a payee’s settlement in turn with a flooding payee’s, not behind all of them', async () => {
    const flooder = await siteAtPrice(app, newWallet().address, '0.000001');
    const honest = await siteAtPrice(app, newWallet().address, '0.01');
    // Two payers of the flooder's, eight settlements in flight each (the most a payer may have).
    const paths = Array.from({ length: 8 }, (_, i) => `/flood/${i}`);
    const flood = [
      await paymentsOfOnePayer(app, flooder, '1', paths),
      await paymentsOfOnePayer(app, flooder, '1', paths),
    ];
    const honestPayer = await paymentsOfOnePayer(app, honest, '1', ['/page']);
    const before = broadcasts;
    const flooding = Promise.all(flood.flatMap((payer) => paths.map((_, i) => payer.verify(i))));
    // The flood queued behind its first broadcast, then the honest payment.
    while (broadcasts === before) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const paid = await honestPayer.verify(0);
    const flooded = await flooding;
    expect([paid, ...flooded].map((answer) => answer.status)).toEqual(Array(17).fill(200));
    const nonceOf = async (hash: `0x${string}`) => (await app.chain.publicClient.getTransaction({ hash })).nonce;
    const honestNonce = await nonceOf(paid.body.tx_hash);
    const floodNonces = await Promise.all(flooded.map((answer) => nonceOf(answer.body.tx_hash)));
    // In one queue, the honest settlement went out after every one of the flood's queued before it.
    const after = floodNonces.filter((nonce) => nonce > honestNonce).length;
    expect(after).toBeGreaterThanOrEqual(8);
  }, 60_000);
});
