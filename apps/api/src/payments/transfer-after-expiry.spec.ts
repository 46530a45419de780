import { transferProofMessage } from '@crawlgate/core';
import { increaseTime, mineBlocks } from '@crawlgate/devchain';
import { openGate, pricedSite, type TestSite } from '../../test/fixtures';
import { fundEth, fundUsdc, newWallet, sendUsdc, usdcBalance } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';

/*
 * A transfer proof is judged by when its transfer was mined, not when the proof arrives: a payer
 * whose transfer was mined while the gate was open, confirmed only after it expired, was answered
 * 202 "ask again shortly", then 404 for good, its USDC paid to the publisher and no token.
 */
describe('a transfer proof for a gate that expired meanwhile', () => {
  const GATE_SECONDS = 4;
  let app: TestApp;
  let site: TestSite;
  const payTo = newWallet().address;
  const payer = newWallet();

  beforeAll(async () => {
    // Two confirmations: a transfer mined now stays pending until one more block.
    app = await startTestApp({
      isolateChain: true,
      config: { gateTtlSeconds: GATE_SECONDS, chain: { confirmations: 2 } },
    });
    ({ site } = await pricedSite(app, payTo));
    await fundUsdc(app, payer.address, '1');
    await fundEth(app, payer.address);
  });
  afterAll(() => app.close());

  const verify = (gateId: string, body: unknown) => app.call('POST', `/v1/gates/${gateId}/verify`, { body });
  const pay = () => sendUsdc(app, payer, payTo, 10_000n);
  const proof = async (gate: { ref: string }, hash: `0x${string}`) => ({
    tx_hash: hash,
    signature: await payer.signMessage({ message: transferProofMessage(gate.ref, hash) }),
  });
  const pastExpiry = (gate: { expires_at: string }) =>
    new Promise((resolve) => setTimeout(resolve, new Date(gate.expires_at).getTime() - Date.now() + 1_500));

  it('pays a gate with a transfer mined before it expired, confirmed after', async () => {
    const gate = await openGate(app, site, '/mined-in-time');
    const hash = await pay();
    const body = await proof(gate, hash);
    expect(await verify(gate.id, body)).toMatchObject({ status: 202 });
    await pastExpiry(gate);
    await mineBlocks(app.chain.rpcUrl, 1);
    const paid = await verify(gate.id, body);
    expect(paid.status === 200 ? 200 : paid).toBe(200);
    expect(paid.body).toMatchObject({ status: 'paid', url: '/mined-in-time', access_token: expect.any(String) });
    expect(await usdcBalance(app, payTo)).toBe(10_000n);
    // The same proof again: the same answer.
    expect((await verify(gate.id, body)).body.access_token).toBe(paid.body.access_token);
  }, 30_000);

  it('refuses a transfer mined after the gate expired, and an expired gate stays unpayable otherwise', async () => {
    const gate = await openGate(app, site, '/mined-late');
    await pastExpiry(gate);
    // Past the 30 s the chain's clock may differ by (the last test: the chain is reverted after it).
    await increaseTime(app.chain.rpcUrl, 60);
    const hash = await pay();
    await mineBlocks(app.chain.rpcUrl, 1);
    expect(await verify(gate.id, await proof(gate, hash))).toMatchObject({
      status: 402,
      body: { reason: 'transaction_after_gate_expiry' },
    });
    expect(await app.database.prisma.payment.count({ where: { gateId: gate.ref } })).toBe(0);
    // An authorization for the expired gate is a 404, as before.
    expect((await verify(gate.id, { payment: { x402Version: 1 } })).status).toBe(404);
  }, 30_000);
});
