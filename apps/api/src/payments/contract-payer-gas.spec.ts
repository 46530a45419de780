import { exactPaymentV1, USDC_ABI } from '@crawlgate/core';
import {
  buildAuthorization,
  devTestClient,
  simulationAwareWalletAbi,
  simulationAwareWalletBytecode,
} from '@crawlgate/devchain';
import type { Hex } from 'viem';
import { openGate, pricedSite, type TestSite } from '../../test/fixtures';
import { fundEth, fundUsdc, newWallet, signPayment, usdcBalance, walletOf } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { MAX_PAYER_SETTLEMENTS_IN_FLIGHT } from './payer-balance';

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
    const hash = await walletOf(app, deployer).deployContract({
      abi: simulationAwareWalletAbi,
      bytecode: simulationAwareWalletBytecode,
    } as never);
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
    expect(answers.filter((answer) => answer.status === 202)).toHaveLength(1);
    // Each other one is answered busy while the first is out, or refused once its revert held the
    // payer (a request the API reached that late): never sent either way.
    for (const other of answers.filter((answer) => answer.status !== 202)) {
      if (other.status === 503)
        expect([other.body.detail, other.headers.get('retry-after')]).toEqual([
          expect.stringMatching(/one at a time/),
          '2',
        ]);
      else expect([other.status, other.body.reason]).toEqual([402, 'payer_not_relayed']);
    }
    // Reverted: the payer is not relayed again (a short authorization, released soon, would otherwise free it).
    const next = await openGate(app, site, '/contract/next');
    const later = await app.call('POST', `/v1/gates/${next.id}/verify`, { body: { payment: paymentFor(next) } });
    expect([later.status, later.body.reason]).toEqual([402, 'payer_not_relayed']);
    expect((await relayerSent()) - before).toBe(1);
    expect(await usdcBalance(app, payTo)).toBe(0n);
  }, 60_000);
});

/*
 * An EOA passes the same checks, then moves its funds (or sets code, EIP-7702) ahead of the
 * relayer's transactions, in the same block: every settlement it had in flight reverts at our gas.
 * Once: the payer is then not relayed for a day.
 */
describe('an EOA that empties its account ahead of the relayer', () => {
  let app: TestApp;
  let site: TestSite;
  const payTo = newWallet().address;
  const payer = newWallet();

  beforeAll(async () => {
    app = await startTestApp({ isolateChain: true });
    ({ site } = await pricedSite(app, payTo));
    await fundUsdc(app, payer.address, '1');
    await fundEth(app, payer.address);
  });
  afterAll(async () => {
    await devTestClient(app.chain.rpcUrl).setAutomine(true);
    await app.close();
  });

  it('gets its settlements in flight reverted once, then is not relayed', async () => {
    const relayerSent = () =>
      app.chain.publicClient.getTransactionCount({ address: app.chain.relayer.account.address, blockTag: 'pending' });
    const gates = await Promise.all(Array.from({ length: 3 }, (_, i) => openGate(app, site, `/eoa/${i}`)));
    const payments = await Promise.all(gates.map((gate) => signPayment(app, payer, gate)));
    const before = await relayerSent();
    const client = devTestClient(app.chain.rpcUrl);
    await client.setAutomine(false);
    const answers = Promise.all(
      gates.map((gate, i) => app.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment: payments[i] } })),
    );
    while ((await relayerSent()) - before < 3) await new Promise((resolve) => setTimeout(resolve, 50));
    // Its whole balance away, with a higher tip: mined first in the block.
    const wallet = walletOf(app, payer);
    await wallet.writeContract({
      address: app.chain.usdc,
      abi: USDC_ABI,
      functionName: 'transfer',
      args: [newWallet().address, 1_000_000n],
      gas: 100_000n, // not estimated on the pending block, where the settlements took their part first
      maxPriorityFeePerGas: 50_000_000_000n,
      maxFeePerGas: 100_000_000_000n,
    });
    await client.mine({ blocks: 1 });
    await client.setAutomine(true);
    expect((await answers).map((answer) => answer.status)).toEqual([202, 202, 202]);
    expect(await usdcBalance(app, payTo)).toBe(0n);
    // Funded again, it is not relayed: nothing more is sent.
    await fundUsdc(app, payer.address, '1');
    const next = await openGate(app, site, '/eoa/next');
    const refused = await app.call('POST', `/v1/gates/${next.id}/verify`, {
      body: { payment: await signPayment(app, payer, next) },
    });
    expect([refused.status, refused.body.reason]).toEqual([402, 'payer_not_relayed']);
    expect((await relayerSent()) - before).toBe(3);
  }, 60_000);
});

/*
 * The same EOA with many payments at once: each in flight is one more settlement reverted at our
 * gas when it moves its funds first. Past MAX_PAYER_SETTLEMENTS_IN_FLIGHT, a payment waits for one
 * to land (503, nothing sent, nothing charged), and pays when sent again.
 */
describe('an EOA that sends more payments at once than may be in flight', () => {
  let app: TestApp;
  let site: TestSite;
  const payTo = newWallet().address;
  const payer = newWallet();
  const extra = 3;

  beforeAll(async () => {
    app = await startTestApp({ isolateChain: true });
    ({ site } = await pricedSite(app, payTo));
    await fundUsdc(app, payer.address, '1');
  });
  afterAll(async () => {
    await devTestClient(app.chain.rpcUrl).setAutomine(true);
    await app.close();
  });

  it('gets no more than the bound sent, and the rest paid when sent again', async () => {
    const relayerSent = () =>
      app.chain.publicClient.getTransactionCount({ address: app.chain.relayer.account.address, blockTag: 'pending' });
    const count = MAX_PAYER_SETTLEMENTS_IN_FLIGHT + extra;
    const gates = await Promise.all(Array.from({ length: count }, (_, i) => openGate(app, site, `/many/${i}`)));
    const payments = await Promise.all(gates.map((gate) => signPayment(app, payer, gate)));
    const verify = (i: number) =>
      app.call('POST', `/v1/gates/${gates[i].id}/verify`, { body: { payment: payments[i] } });
    const before = await relayerSent();
    const client = devTestClient(app.chain.rpcUrl);
    await client.setAutomine(false);
    const answers = gates.map((_, i) => verify(i));
    const refused = (
      await Promise.all(answers.map((answer) => Promise.race([answer, new Promise((r) => setTimeout(r, 5_000))])))
    ).filter((answer: any) => answer?.status === 503) as Awaited<ReturnType<typeof verify>>[];
    // Every broadcast made while none could land: the bound, no more.
    expect((await relayerSent()) - before).toBe(MAX_PAYER_SETTLEMENTS_IN_FLIGHT);
    expect(refused).toHaveLength(extra);
    for (const answer of refused)
      expect([answer.body.detail, answer.body.charged, answer.headers.get('retry-after')]).toEqual([
        expect.stringMatching(/in flight/),
        false,
        '1',
      ]);
    await client.mine({ blocks: 1 });
    await client.setAutomine(true);
    const statuses = (await Promise.all(answers)).map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(MAX_PAYER_SETTLEMENTS_IN_FLIGHT);
    // Sent again once the others landed: paid, each once.
    const again = gates.map((_, i) => i).filter((i) => statuses[i] === 503);
    expect((await Promise.all(again.map(verify))).map((answer) => answer.status)).toEqual(again.map(() => 200));
    expect(await usdcBalance(app, payTo)).toBe(BigInt(gates[0].amount) * BigInt(count));
  }, 90_000);
});
