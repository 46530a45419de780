import { transferProofMessage } from '@crawlgate/core';
import { devTestClient, increaseTime, revert, snapshot } from '@crawlgate/devchain';
import type { Hex } from 'viem';
import { openGate, pricedSite, type TestSite } from '../../test/fixtures';
import {
  fundEth,
  fundUsdc,
  mineAgainBehindAnother,
  newWallet,
  sendTransfersAhead,
  strangersBundler,
  sendUsdc,
  signPayment,
  usdcBalance,
} from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { PaymentsService } from './payments.service';
import { PaymentStore } from './payment.store';
import { ReconcilerService } from './reconciler.service';

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

  /**
   * A payer's transfer of one gate's price, proved for gate A and gate B on either side of a reorg
   * that moves it: proof A read the receipt before it, and is held at its claim until B is answered
   * (a slow contract wallet's check, a busy database). `beforeClaimChecked` runs when A's claim is
   * about to be checked against the receipt again. Each proof's answer.
   */
  async function straddlingProofs(
    name: string,
    beforeClaimChecked: (gateA: { ref: string }) => Promise<void> = async () => undefined,
  ) {
    const payer = newWallet();
    const other = newWallet();
    for (const account of [payer, other]) {
      await fundUsdc(app, account.address, '1');
      await fundEth(app, account.address);
    }
    const gateA = await openGate(app, site, `/${name}/a`);
    const gateB = await openGate(app, site, `/${name}/b`);
    const beforeTransfer = await snapshot(app.chain.rpcUrl);
    const hash = await sendUsdc(app, payer, payTo, BigInt(gateA.amount));
    const verify = async (gate: { id: string; ref: string }) =>
      app.call('POST', `/v1/gates/${gate.id}/verify`, {
        body: { tx_hash: hash, signature: await payer.signMessage({ message: transferProofMessage(gate.ref, hash) }) },
      });
    const service = app.app.get(PaymentsService) as unknown as {
      claim(...args: unknown[]): Promise<unknown>;
      transfersStillHold(...args: unknown[]): Promise<boolean>;
    };
    const [claim, stillHold] = [service.claim.bind(service), service.transfersStillHold.bind(service)];
    let reached = () => undefined as void;
    const atClaim = new Promise<void>((resolve) => (reached = resolve));
    let release = () => undefined as void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const held = jest.spyOn(service, 'claim').mockImplementationOnce(async (...args: unknown[]) => {
      reached();
      await released;
      return claim(...args);
    });
    let armed = false;
    const checked = jest.spyOn(service, 'transfersStillHold').mockImplementation(async (...args: unknown[]) => {
      if (armed) {
        armed = false;
        await beforeClaimChecked(gateA);
      }
      return stillHold(...args);
    });
    try {
      const proofA = verify(gateA);
      await atClaim;
      await mineAgainBehindAnother(app, { hash, snapshot: beforeTransfer, ahead: other });
      const paidB = await verify(gateB);
      armed = true;
      release();
      return { paidA: await proofA, paidB, askAgain: () => verify(gateA) };
    } finally {
      held.mockRestore();
      checked.mockRestore();
    }
  }

  it('pays one gate when two proofs of one transfer straddle a reorg: the one read before it is asked again', async () => {
    // Each proof found the transfer at the index its receipt showed: one before the reorg, the other
    // after; neither saw the other's row, and the unique key, on two indexes, stopped neither (helper-362).
    const { paidA, paidB, askAgain } = await straddlingProofs('straddle');
    expect([paidA.status, paidB.status].filter((status) => status === 200)).toHaveLength(1);
    expect([paidA.body.access_token, paidB.body.access_token].filter(Boolean)).toHaveLength(1);
    // Proof A, asked again as its 202 says, finds the transfer paid gate B.
    expect([paidA.status, paidB.status]).toEqual([202, 200]);
    expect((await askAgain()).status).toBe(409);
  });

  it('never lets the reconciler confirm a straddling claim its request is about to take back (helper-364)', async () => {
    let reconciled = 'not run';
    const { paidA, paidB, askAgain } = await straddlingProofs('straddle-reconciled', async (gateA) => {
      const reconciler = app.app.get(ReconcilerService) as unknown as { reconcile(payment: unknown): Promise<string> };
      reconciled = await reconciler.reconcile(await app.app.get(PaymentStore).byGate(gateA.ref));
    });
    expect([reconciled, paidA.status, paidB.status]).toEqual(['waiting', 202, 200]);
    const again = await askAgain();
    expect([again.status, again.body.access_token]).toEqual([409, undefined]);
  });
});

/*
 * A reorg moving a relayed bundle of several payers' transfers (helper-362): the payments recorded
 * before keep the log indexes of the first mining, where now other payers' Transfers may sit.
 */
describe('a bundle of transfers mined again at another place in its block by a reorg', () => {
  let app: TestApp;
  let site: TestSite;
  const payTo = newWallet().address;

  beforeAll(async () => {
    app = await startTestApp({ isolateChain: true, config: { chain: { foreignSettlementHoldSeconds: 2 } } });
    ({ site } = await pricedSite(app, payTo));
  });
  afterAll(async () => {
    await devTestClient(app.chain.rpcUrl).setAutomine(true);
    await app.close();
  });

  it("answers an honest payer whose Transfer now sits at another payment's recorded index: 200, not 409", async () => {
    const [x, y, other] = [newWallet(), newWallet(), newWallet()];
    for (const account of [x, y, other]) await fundUsdc(app, account.address, '1');
    await fundEth(app, other.address);
    const gateX = await openGate(app, site, '/bundle/x');
    const gateY = await openGate(app, site, '/bundle/y');
    const [payY, payX] = [await signPayment(app, y, gateY), await signPayment(app, x, gateX)];
    const bundler = await strangersBundler(app);
    const beforeMined = await snapshot(app.chain.rpcUrl);
    // Y's authorization, then X's: Y's Transfer at 1, X's at 3 of their block.
    const hash = await bundler.send([payY, payX]);
    await app.chain.publicClient.waitForTransactionReceipt({ hash });
    const verify = async (payer: typeof x, gate: { id: string; ref: string }) =>
      app.call('POST', `/v1/gates/${gate.id}/verify`, {
        body: { tx_hash: hash, signature: await payer.signMessage({ message: transferProofMessage(gate.ref, hash) }) },
      });
    expect((await verify(x, gateX)).status).toBe(200);
    // Mined again behind two one-log transfers: Y's Transfer now sits at X's recorded index.
    await mineAgainBehindAnother(app, { hash, snapshot: beforeMined, ahead: other, transfersAhead: 2 });
    const paidY = await verify(y, gateY);
    expect([paidY.status, typeof paidY.body.access_token]).toEqual([200, 'string']);
    expect((await verify(x, gateX)).status).toBe(200);
    expect((await verify(y, gateX)).status).not.toBe(200);
  });

  /**
   * One agent's authorizations for two fresh gates; the first `claimed` of them posted to the API
   * with automine off (its settlements wait in the mempool); then a stranger's bundle of both lands
   * first, behind two one-log transfers: N1's Transfer at 3, N2's at 5. `reorg()` mines the bundle
   * again first in its block (the transfers ahead gone): N1's at 1, N2's at 3.
   */
  async function bundleAheadOfOurSettlements(name: string, claimed: 1 | 2) {
    const chain = devTestClient(app.chain.rpcUrl);
    const [agent, other] = [newWallet(), newWallet()];
    await fundUsdc(app, agent.address, '1');
    await fundUsdc(app, other.address, '1');
    await fundEth(app, other.address);
    const bundler = await strangersBundler(app);
    const gates = [await openGate(app, site, `/${name}/g1`), await openGate(app, site, `/${name}/g2`)];
    const payments = [await signPayment(app, agent, gates[0]), await signPayment(app, agent, gates[1])];
    const relayer = app.chain.relayer.account.address;
    const sent = () => app.chain.publicClient.getTransactionCount({ address: relayer, blockTag: 'pending' });
    const sentBefore = await sent();
    await chain.setAutomine(false);
    const answers = payments
      .slice(0, claimed)
      .map((payment, i) => app.call('POST', `/v1/gates/${gates[i].id}/verify`, { body: { payment } }));
    for (const started = Date.now(); (await sent()) < sentBefore + claimed; await new Promise((r) => setTimeout(r, 20)))
      if (Date.now() - started > 10_000) throw new Error('the relayer never broadcast the settlements');
    const beforeMined = await snapshot(app.chain.rpcUrl);
    const ahead = await sendTransfersAhead(app, other, 2);
    const bundle = await bundler.send(payments, {
      gas: 500_000n,
      maxFeePerGas: 200_000_000_000n,
      maxPriorityFeePerGas: 100_000_000_000n,
    });
    await chain.mine({ blocks: 1 });
    await chain.setAutomine(true);
    await Promise.all(answers);
    const reorg = async () => {
      const raw: Hex = await app.chain.publicClient.request({
        method: 'eth_getRawTransactionByHash',
        params: [bundle],
      });
      await revert(app.chain.rpcUrl, beforeMined);
      await chain.setAutomine(false);
      for (const hash of ahead) await chain.dropTransaction({ hash }).catch(() => undefined);
      await app.chain.publicClient.sendRawTransaction({ serializedTransaction: raw }).catch(() => undefined);
      await chain.mine({ blocks: 1 });
      await chain.setAutomine(true);
      await increaseTime(app.chain.rpcUrl, 3);
    };
    return { agent, gates, payments, bundle, reorg };
  }

  const reconcile = async (gate: { ref: string }) => {
    const reconciler = app.app.get(ReconcilerService) as unknown as { reconcile(payment: unknown): Promise<string> };
    return reconciler.reconcile(await app.app.get(PaymentStore).byGate(gate.ref));
  };

  it("never releases a claim its payer's authorization paid because another of its claims was recorded at that index", async () => {
    const { gates, payments, reorg } = await bundleAheadOfOurSettlements('bundle', 2);
    await increaseTime(app.chain.rpcUrl, 3);
    expect(await reconcile(gates[0])).toBe('finalized');
    await reorg();
    expect(await reconcile(gates[1])).toBe('finalized');
    const paid = await app.call('POST', `/v1/gates/${gates[1].id}/verify`, { body: { payment: payments[1] } });
    expect([paid.status, typeof paid.body.access_token]).toEqual([200, 'string']);
  });

  it('never releases an authorization claim whose Transfer a moved proof of its payer could be matched to (helper-364)', async () => {
    const { agent, gates, payments, bundle, reorg } = await bundleAheadOfOurSettlements('bundle-proof', 1);
    // The payer proves the bundle for the second gate (its second Transfer, recorded at 5).
    const byHash = await app.call('POST', `/v1/gates/${gates[1].id}/verify`, {
      body: {
        tx_hash: bundle,
        signature: await agent.signMessage({ message: transferProofMessage(gates[1].ref, bundle) }),
      },
    });
    expect(byHash.status).toBe(200);
    await reorg();
    expect(await reconcile(gates[0])).toBe('finalized');
    const paid = await app.call('POST', `/v1/gates/${gates[0].id}/verify`, { body: { payment: payments[0] } });
    expect([paid.status, typeof paid.body.access_token]).toEqual([200, 'string']);
    expect((await app.app.get(PaymentStore).byGate(gates[1].ref))?.status).toBe('confirmed');
  });
});
