import { transferProofMessage } from '@crawlgate/core';
import { devTestClient, snapshot } from '@crawlgate/devchain';
import { openGate, pricedSite, type TestSite } from '../../test/fixtures';
import { fundEth, fundUsdc, mineAgainBehindAnother, newWallet, sendUsdc, usdcBalance } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';

/*
 * A transfer that paid a gate is recorded with its Transfer's log index, which is the log's place
 * in its block. A reorg that mines the same transaction again behind another one moves it: the
 * transfer that paid gate A, found at an index no payment recorded, paid gate B too (helper-361).
 */
describe('a transfer mined again at another place in its block by a reorg', () => {
  let app: TestApp;
  let site: TestSite;
  const payTo = newWallet().address;

  beforeAll(async () => {
    app = await startTestApp({ isolateChain: true });
    ({ site } = await pricedSite(app, payTo));
  });
  afterAll(async () => {
    await devTestClient(app.chain.rpcUrl).setAutomine(true);
    await app.close();
  });

  it('pays the gate it paid, and no other', async () => {
    const payer = newWallet();
    const other = newWallet();
    for (const account of [payer, other]) {
      await fundUsdc(app, account.address, '1');
      await fundEth(app, account.address);
    }
    const gateA = await openGate(app, site, '/reorg/a');
    const gateB = await openGate(app, site, '/reorg/b');
    expect(gateA.amount).toBe(gateB.amount);
    const beforeTransfer = await snapshot(app.chain.rpcUrl);
    const hash = await sendUsdc(app, payer, payTo, BigInt(gateA.amount));
    const first = await app.chain.publicClient.getTransactionReceipt({ hash });
    const proof = async (gate: { ref: string }) => ({
      tx_hash: hash,
      signature: await payer.signMessage({ message: transferProofMessage(gate.ref, hash) }),
    });
    const verify = async (gate: { id: string; ref: string }) =>
      app.call('POST', `/v1/gates/${gate.id}/verify`, { body: await proof(gate) });
    expect((await verify(gateA)).status).toBe(200);

    // The reorg: back before the transfer, then one block mining it behind another USDC transfer (a higher tip goes first).
    await mineAgainBehindAnother(app, { hash, snapshot: beforeTransfer, ahead: other });
    const second = await app.chain.publicClient.getTransactionReceipt({ hash });
    expect(second.logs.map((log) => log.logIndex)).not.toEqual(first.logs.map((log) => log.logIndex));

    const paidB = await verify(gateB);
    expect([paidB.status, paidB.body.access_token]).toEqual([409, undefined]);
    // The gate it paid is still answered, with its token.
    const paidA = await verify(gateA);
    expect([paidA.status, typeof paidA.body.access_token]).toEqual([200, 'string']);
    expect(await usdcBalance(app, payTo)).toBe(BigInt(gateA.amount));
  });
});
