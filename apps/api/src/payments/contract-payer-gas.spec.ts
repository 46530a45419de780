import { exactPaymentV1 } from '@crawlgate/core';
import { buildAuthorization, simulationAwareWalletAbi, simulationAwareWalletBytecode } from '@crawlgate/devchain';
import { createWalletClient, http, type Hex } from 'viem';
import { openGate, pricedSite, type TestSite } from '../../test/fixtures';
import { fundEth, fundUsdc, newWallet, usdcBalance } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';

/*
 * A contract wallet's signature check runs its own code: one that says yes in a simulation (gas
 * priced at 0) and no on chain passes every check the API makes, and each settlement the relayer
 * then sends reverts at the relayer's cost, none of the payer's. Sent at once, every one of them
 * was sent. A contract payer's authorizations are now settled one at a time, and one held after
 * a revert (until it expires) holds the next.
 */
describe('a contract wallet that signs only in simulations', () => {
  let app: TestApp;
  let site: TestSite;
  const payTo = newWallet().address;
  let wallet: Hex;

  beforeAll(async () => {
    app = await startTestApp({ isolateChain: true });
    ({ site } = await pricedSite(app, payTo));
    const deployer = newWallet();
    await fundEth(app, deployer.address);
    const hash = await createWalletClient({
      account: deployer,
      chain: app.chain.relayer.chain,
      transport: http(app.chain.rpcUrl),
    }).deployContract({ abi: simulationAwareWalletAbi, bytecode: simulationAwareWalletBytecode } as never);
    wallet = (await app.chain.publicClient.waitForTransactionReceipt({ hash })).contractAddress!;
    await fundUsdc(app, wallet, '1');
  });
  afterAll(() => app.close());

  const relayerSent = () =>
    app.chain.publicClient.getTransactionCount({ address: app.chain.relayer.account.address, blockTag: 'pending' });
  const paymentFor = (gate: any) =>
    exactPaymentV1(
      gate.accepts[0].network,
      buildAuthorization({ from: wallet, to: gate.pay_to, value: BigInt(gate.amount), validForSeconds: 300 }),
      `0x${'11'.repeat(65)}`,
    );

  it('gets one settlement sent for payments sent at once, and none while the reverted one is held', async () => {
    const gates = await Promise.all(Array.from({ length: 4 }, (_, i) => openGate(app, site, `/contract/${i}`)));
    const before = await relayerSent();
    const answers = await Promise.all(
      gates.map((gate) => app.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment: paymentFor(gate) } })),
    );
    expect((await relayerSent()) - before).toBe(1);
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([202, 503, 503, 503]);
    const busy = answers.find((answer) => answer.status === 503)!;
    expect([busy.body.detail, busy.headers.get('retry-after')]).toEqual([expect.stringMatching(/one at a time/), '2']);
    // The reverted one is held until its authorization expires: the next is not sent either.
    const next = await openGate(app, site, '/contract/next');
    const later = await app.call('POST', `/v1/gates/${next.id}/verify`, { body: { payment: paymentFor(next) } });
    expect(later.status).toBe(503);
    expect((await relayerSent()) - before).toBe(1);
    expect(await usdcBalance(app, payTo)).toBe(0n);
  }, 60_000);
});
