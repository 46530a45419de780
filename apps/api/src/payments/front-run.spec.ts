import { readGate, transferProofMessage, USDC_ABI } from '@crawlgate/core';
import {
  devTestClient,
  increaseTime,
  signCancelAuthorization,
  snapshot,
  testUsdcAbi,
  usdcDomain,
} from '@crawlgate/devchain';
import { formatUnits, type Abi, type Hash, type Hex } from 'viem';
import { openGate, pricedSite, type TestSite } from '../../test/fixtures';
import {
  fundEth,
  fundUsdc,
  mineAgainBehindAnother,
  newWallet,
  sendAuthorizationAsStranger,
  settlementArgs,
  signOffer,
  signPayment,
  usdcBalance,
  walletOf,
} from '../../test/test-agent';
import { capsLogRange, startRpcRewriter, type RpcRefusal } from '../../test/rpc-rewriter';
import { startTestApp, type TestApp } from '../../test/test-app';
import { pausedAt } from '../../test/pause-at';
import { workerChain } from '../../test/test-chain';
import { loadConfig } from '../config/config';
import { PaymentsService } from './payments.service';
import { ReconcilerService } from './reconciler.service';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The hold on transfers not our relayer's, in the tests that wait it out (the default is 120 s). */
const FOREIGN_HOLD_SECONDS = 2;

/** The widest eth_getLogs range the node of these tests serves, as hosted nodes cap it: below the recent blocks. */
const LOG_RANGE_CAP = 20n;

/**
 * An API on a chain of its own with a priced site paying `payTo`. Recent blocks searched first: few,
 * so a test passes them by mining (anvil mines thousands slowly). Its node refuses eth_getLogs over
 * more than LOG_RANGE_CAP blocks, as hosted nodes do: every search for an authorization's use or
 * cancel here is made in spans. `close` closes the API and its node.
 */
async function frontRunSite(
  payTo: `0x${string}`,
  chain: Partial<Omit<ReturnType<typeof loadConfig>['chain'], 'batchSettlement'>>,
  refuse: (call: { method: string; params: unknown[] }) => RpcRefusal | undefined = () => undefined,
): Promise<{ app: TestApp; site: TestSite; close: () => Promise<void> }> {
  const capped = capsLogRange(LOG_RANGE_CAP);
  const node = await startRpcRewriter(
    workerChain().rpcUrl,
    ({ result }) => result,
    (call) => refuse(call) ?? capped(call),
  );
  const app = await startTestApp({
    isolateChain: true,
    chainRpcUrl: node.url,
    config: { chain: { recentLogBlocks: 50, ...chain } },
  });
  const close = async () => {
    await app.close();
    await node.close();
  };
  return { app, site: (await pricedSite(app, payTo)).site, close };
}

/**
 * An EIP-3009 authorization can be sent by anyone who sees it. When a copy is mined ahead of our
 * relayer's transaction, ours reverts, yet the agent has paid: the answer must not be "nothing was
 * charged" (the agent would pay again), and the payment must end recorded with the copy's transaction.
 */
describe('an authorization settled by someone else ahead of our relayer', () => {
  let app: TestApp;
  let site: TestSite;
  let close: () => Promise<void>;
  const payTo = newWallet().address;
  /** The JSON-RPC error the node answers a call with instead of running it, while a test sets it. */
  let refusing: ((call: { method: string; params: unknown[] }) => RpcRefusal | undefined) | undefined;

  beforeAll(async () => {
    // A short hold on transfers not our relayer's: waited out by the tests that expect one to pay.
    ({ app, site, close } = await frontRunSite(payTo, { foreignSettlementHoldSeconds: FOREIGN_HOLD_SECONDS }, (call) =>
      refusing?.(call),
    ));
  });
  afterAll(async () => {
    await devTestClient(app.chain.rpcUrl).setAutomine(true);
    await close();
  });

  /**
   * The chain's clock past the hold on a settlement by a transaction not ours: a block stamped after
   * it, the clock moved rather than waited for (it stays that far ahead for the tests after).
   */
  async function pastForeignSettlementHold() {
    await increaseTime(app.chain.rpcUrl, FOREIGN_HOLD_SECONDS + 1);
  }

  /**
   * A claim nothing of ours was sent for, kept because its authorization was spent by `copy`: 202
   * first; once the reconciler takes it (older than a broadcast could be on its way, as if that long
   * had passed) and the hold on transfers not ours is over, the same payment is paid by the copy.
   */
  async function paidByCopyOnceHeld(
    gate: { id: string },
    payment: Awaited<ReturnType<typeof signPayment>>,
    first: { status: number; body: unknown },
    copy: Hash,
  ) {
    expect({ status: first.status, body: first.body }).toMatchObject({
      status: 202,
      body: { status: 'settlement_pending', gate_id: gate.id },
    });
    await app.database.prisma.payment.updateMany({
      where: { gateId: readGate(gate.id)!.ref },
      data: { createdAt: new Date(Date.now() - 60_000) },
    });
    await pastForeignSettlementHold();
    await app.app.get(ReconcilerService).runOnce();
    const again = await app.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } });
    expect({ status: again.status, tx_hash: again.body.tx_hash }).toEqual({ status: 200, tx_hash: copy.toLowerCase() });
  }

  /** A funded agent's payment for a fresh gate, verified with automine off: our relayer's transaction waits in the mempool. */
  async function settlementHeldInMempool(path: string) {
    const agent = newWallet();
    await fundUsdc(app, agent.address, '1');
    const gate = await openGate(app, site, path);
    const payment = await signPayment(app, agent, gate);
    const chain = devTestClient(app.chain.rpcUrl);
    const relayer = app.chain.relayer.account.address;
    const pendingCount = () => app.chain.publicClient.getTransactionCount({ address: relayer, blockTag: 'pending' });
    const sentBefore = await pendingCount();
    await chain.setAutomine(false);
    const answer = app.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } });
    for (const started = Date.now(); (await pendingCount()) === sentBefore; await sleep(20)) {
      if (Date.now() - started > 10_000) throw new Error('the relayer never broadcast the settlement');
    }
    return { agent, gate, payment, answer };
  }

  /**
   * Sends `call` to our USDC from `account` with a tip far above our relayer's, then mines one block
   * and turns automine back on: it lands ahead of the settlement held in the mempool.
   */
  async function minedAhead(
    account: ReturnType<typeof newWallet>,
    call: { abi: Abi; functionName: string; args: readonly unknown[] },
  ): Promise<Hash> {
    const hash = await walletOf(app, account).writeContract({
      address: app.chain.usdc,
      ...call,
      gas: 200_000n,
      maxFeePerGas: 100_000_000_000n,
      maxPriorityFeePerGas: 50_000_000_000n,
    } as never);
    const chain = devTestClient(app.chain.rpcUrl);
    await chain.mine({ blocks: 1 });
    await chain.setAutomine(true);
    return hash;
  }

  it('answers 202, not "nothing was charged", and the reconciler records the copy that paid: charged once', async () => {
    const { agent, gate, payment, answer } = await settlementHeldInMempool('/front-run');
    // Our settlement waits in the mempool; a copy of the same authorization with a higher tip goes first.
    const copier = newWallet();
    await fundEth(app, copier.address);
    const copy = await minedAhead(copier, { abi: USDC_ABI, ...settlementArgs(payment) });

    const result = await answer;
    expect(result.status === 202 ? 202 : result).toBe(202);
    expect(result.body).toMatchObject({ status: 'settlement_pending', gate_id: gate.id });

    // Not at once: the copy's sender may be its payer, who may still name it for a gate of its own.
    expect(await app.app.get(ReconcilerService).runOnce()).toMatchObject({ finalized: 0, released: 0 });
    await pastForeignSettlementHold();
    await app.app.get(ReconcilerService).runOnce();
    const again = await app.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } });
    expect(again.status === 200 ? 200 : again).toBe(200);
    expect(again.body.tx_hash).toBe(copy.toLowerCase());
    expect(await usdcBalance(app, agent.address)).toBe(1_000_000n - BigInt(gate.amount));
    expect(await usdcBalance(app, payTo)).toBe(BigInt(gate.amount));
  });

  it('finds the copy that paid when the reconciler first looks after the recent blocks it searches (an outage): charged once, the token issued', async () => {
    const { agent, gate, payment, answer } = await settlementHeldInMempool('/front-run-long-ago');
    const copier = newWallet();
    await fundEth(app, copier.address);
    const copy = await minedAhead(copier, { abi: USDC_ABI, ...settlementArgs(payment) });
    expect((await answer).status).toBe(202);
    // The API was away longer than the recent blocks the reconciler searches first (RECENT_LOG_BLOCKS).
    await devTestClient(app.chain.rpcUrl).mine({ blocks: 51 });
    await pastForeignSettlementHold();

    await app.app.get(ReconcilerService).runOnce();
    const again = await app.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } });
    expect(again.status === 200 ? 200 : again).toBe(200);
    expect(again.body.tx_hash).toBe(copy.toLowerCase());
    expect(await usdcBalance(app, agent.address)).toBe(1_000_000n - BigInt(gate.amount));
  });

  it('pays no gate when the payer used the same nonce for another authorization: the page is never paid for that way', async () => {
    const publisherBefore = await usdcBalance(app, payTo);
    const { agent, gate, payment, answer } = await settlementHeldInMempool('/front-run/same-nonce');
    // The payer signs a second authorization with the same EIP-3009 nonce, paying itself nothing,
    // and sends it with a higher tip: it uses the nonce, and our settlement reverts.
    await fundEth(app, agent.address);
    const auth = payment.payload.authorization;
    const other = await signOffer(app, agent, gate, {
      to: agent.address,
      value: 0n,
      nonce: auth.nonce as `0x${string}`,
    });
    await minedAhead(agent, {
      abi: USDC_ABI,
      functionName: 'transferWithAuthorization',
      args: [
        other.authorization.from,
        other.authorization.to,
        other.authorization.value,
        other.authorization.validAfter,
        other.authorization.validBefore,
        other.authorization.nonce,
        other.signature,
      ],
    });

    const result = await answer;
    expect(result.status).not.toBe(200);
    expect(result.body.access_token).toBeUndefined();
    await app.app.get(ReconcilerService).runOnce();
    const again = await app.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } });
    expect(again.status).not.toBe(200);
    expect(again.body.access_token).toBeUndefined();
    expect(await usdcBalance(app, payTo)).toBe(publisherBefore);
    expect(await usdcBalance(app, agent.address)).toBe(1_000_000n);
    // Nothing of the gate's stays paid or pending: another agent can pay it.
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    const paid = await app.call('POST', `/v1/gates/${gate.id}/verify`, {
      body: { payment: await signPayment(app, payer, gate) },
    });
    expect(paid.status === 200 ? 200 : paid).toBe(200);
    expect(await usdcBalance(app, payTo)).toBe(publisherBefore + BigInt(gate.amount));
  });

  it('keeps the claim when ours reverts while its authorization can still land: a copy sent later pays this gate, charged once', async () => {
    const publisherBefore = await usdcBalance(app, payTo);
    const { agent, gate, payment, answer } = await settlementHeldInMempool('/front-run/balance-moved');
    // The payer moves its USDC away ahead of our settlement, which reverts with the nonce unused.
    await fundEth(app, agent.address);
    const friend = newWallet();
    await fundEth(app, friend.address);
    await minedAhead(agent, { abi: USDC_ABI, functionName: 'transfer', args: [friend.address, 1_000_000n] });

    const result = await answer;
    expect(result.body.access_token).toBeUndefined();
    // Not "nothing was charged": the authorization is public in our reverted transaction, and valid.
    expect(result.status === 202 ? 202 : result).toBe(202);
    expect(result.body).toMatchObject({ status: 'settlement_pending', gate_id: gate.id });
    const nonce = payment.payload.authorization.nonce as `0x${string}`;
    expect(await app.database.prisma.payment.count({ where: { nonce } })).toBe(1);

    // The money comes back, and a stranger sends the authorization read from the chain.
    await walletOf(app, friend).writeContract({
      address: app.chain.usdc,
      abi: USDC_ABI,
      functionName: 'transfer',
      args: [agent.address, 1_000_000n],
    });
    // Our relayer does not send it again: a payer able to make it revert at will (a smart wallet
    // whose signature check flips) would have the relayer pay for a reverting transaction each pass.
    const relayer = app.chain.relayer.account.address;
    const sentBefore = await app.chain.publicClient.getTransactionCount({ address: relayer });
    expect(await app.app.get(ReconcilerService).runOnce()).toMatchObject({ resubmitted: 0, released: 0 });
    expect(await app.chain.publicClient.getTransactionCount({ address: relayer })).toBe(sentBefore);
    await app.chain.publicClient.waitForTransactionReceipt({ hash: await sendAuthorizationAsStranger(app, payment) });

    // The payer gets its page for that charge (once no gate of its own could be named for it), and is charged once.
    await pastForeignSettlementHold();
    await app.app.get(ReconcilerService).runOnce();
    const again = await app.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } });
    expect(again.status === 200 ? 200 : again).toBe(200);
    expect(again.body.access_token).toEqual(expect.any(String));
    expect(await usdcBalance(app, agent.address)).toBe(1_000_000n - BigInt(gate.amount));
    expect(await usdcBalance(app, payTo)).toBe(publisherBefore + BigInt(gate.amount));
  });

  it('keeps the claim when a copy is mined after its balance was read and before ours is estimated: 202, never refused, and the copy pays this gate', async () => {
    const agent = newWallet();
    await fundUsdc(app, agent.address, '1');
    const gate = await openGate(app, site, '/front-run/before-estimate');
    const payment = await signPayment(app, agent, gate);
    // The estimate made beside the claim meets a node's rate limit; the copy lands once the balance
    // was read, so the estimate made again to send it reverts: the authorization is used.
    const payer = agent.address.slice(2).toLowerCase();
    refusing = ({ method, params }) =>
      ['eth_estimateGas', 'eth_fillTransaction'].includes(method) &&
      JSON.stringify(params).toLowerCase().includes(payer)
        ? { code: -32005, message: 'request rate exceeded' }
        : undefined;
    const service = app.app.get(PaymentsService) as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const coverage = service.payerCoverage.bind(service);
    let copy: Hash | undefined;
    jest.spyOn(service, 'payerCoverage').mockImplementationOnce(async (...args) => {
      const answer = await coverage(...args);
      refusing = undefined;
      copy = await sendAuthorizationAsStranger(app, payment);
      await app.chain.publicClient.waitForTransactionReceipt({ hash: copy });
      return answer;
    });

    const first = await app
      .call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } })
      .finally(() => (refusing = undefined));
    expect(copy).toBeDefined();
    await paidByCopyOnceHeld(gate, payment, first, copy!);
    expect(await usdcBalance(app, agent.address)).toBe(1_000_000n - BigInt(gate.amount));
  });

  it('keeps the claim when a copy is mined just before the payer’s balance is read: 202, not "insufficient funds", and the copy pays this gate', async () => {
    const agent = newWallet();
    const gate = await openGate(app, site, '/front-run/before-coverage');
    await fundUsdc(app, agent.address, formatUnits(BigInt(gate.amount), 6)); // the page's price, no more
    const payment = await signPayment(app, agent, gate);
    let copy: Hash | undefined;

    const first = await pausedAt(
      app.app.get(PaymentsService),
      'payerCoverage',
      async () => {
        copy = await sendAuthorizationAsStranger(app, payment);
        await app.chain.publicClient.waitForTransactionReceipt({ hash: copy });
      },
      () => app.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } }),
    );
    await paidByCopyOnceHeld(gate, payment, first, copy!);
    expect(await usdcBalance(app, agent.address)).toBe(0n);
  });

  it('tells a canceled authorization from a used one: 402, nothing charged, the gate payable again, never 202 forever', async () => {
    const { agent, gate, payment, answer } = await settlementHeldInMempool('/front-run/canceled');
    // The payer itself cancels the authorization, with a higher tip than our relayer's transaction.
    await fundEth(app, agent.address);
    const nonce = payment.payload.authorization.nonce as `0x${string}`;
    const cancelSignature = await signCancelAuthorization(
      agent,
      usdcDomain(app.chain.chainId, app.chain.usdc),
      agent.address,
      nonce,
    );
    await minedAhead(agent, {
      abi: testUsdcAbi,
      functionName: 'cancelAuthorization',
      args: [agent.address, nonce, cancelSignature],
    });

    const result = await answer;
    expect({ status: result.status, reason: result.body.reason }).toEqual({
      status: 402,
      reason: 'invalid_exact_evm_nonce_already_used',
    });
    expect(result.body.detail).toMatch(/canceled/);
    expect(await usdcBalance(app, agent.address)).toBe(1_000_000n);
    expect(await app.database.prisma.payment.count({ where: { nonce } })).toBe(0);

    // Payable again: another agent pays the same gate.
    const other = newWallet();
    await fundUsdc(app, other.address, '1');
    const paid = await app.call('POST', `/v1/gates/${gate.id}/verify`, {
      body: { payment: await signPayment(app, other, gate) },
    });
    expect(paid.status === 200 ? 200 : paid).toBe(200);
  });
});

/**
 * A payer may have its own authorization sent by a relay of its choosing, then prove that transfer
 * for its gate (tx_hash and its signature). While that transaction waits in the mempool, its
 * authorization is public: a stranger posting it to a gate of its own at the same price and pay_to
 * must not have that gate paid with the payer's money before the payer could name its transfer.
 */
describe("a payer's authorization, sent by its own relay, posted by a stranger to another gate", () => {
  let app: TestApp;
  let site: TestSite;
  let close: () => Promise<void>;
  const payTo = newWallet().address;

  beforeAll(async () => {
    ({ app, site, close } = await frontRunSite(payTo, { settlementTimeoutMs: 500, reconcileIntervalMs: 0 }));
  });
  afterAll(async () => {
    await devTestClient(app.chain.rpcUrl).setAutomine(true);
    await close();
  });

  it('pays the payer’s gate when it names its transfer after the reconciler has seen it, and never the stranger’s', async () => {
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    const own = await openGate(app, site, '/relayed/own');
    const strangers = await openGate(app, site, '/relayed/strangers');
    const payment = await signPayment(app, payer, own);

    const chain = devTestClient(app.chain.rpcUrl);
    await chain.setAutomine(false);
    let relayed: Hash;
    let posted: Awaited<ReturnType<TestApp['call']>>;
    try {
      relayed = await sendAuthorizationAsStranger(app, payment);
      posted = await app.call('POST', `/v1/gates/${strangers.id}/verify`, { body: { payment } });
    } finally {
      await chain.mine({ blocks: 1 });
      await chain.setAutomine(true);
    }
    expect(posted.status).not.toBe(200);
    expect((await app.chain.publicClient.waitForTransactionReceipt({ hash: relayed })).status).toBe('success');

    // The stranger's claim is old enough for the reconciler, which finds the payer's transfer.
    await sleep(2_100);
    await app.app.get(ReconcilerService).runOnce();
    const stolen = await app.call('POST', `/v1/gates/${strangers.id}/verify`, { body: { payment } });
    expect(stolen.body.access_token).toBeUndefined();

    const proof = await app.call('POST', `/v1/gates/${own.id}/verify`, {
      body: {
        tx_hash: relayed,
        signature: await payer.signMessage({ message: transferProofMessage(own.ref, relayed) }),
      },
    });
    expect(proof.status === 200 ? 200 : proof).toBe(200);
    await app.app.get(ReconcilerService).runOnce();
    const again = await app.call('POST', `/v1/gates/${strangers.id}/verify`, { body: { payment } });
    expect(again.body.access_token).toBeUndefined();
    expect(await usdcBalance(app, payTo)).toBe(BigInt(own.amount));
  });

  it('pays no stranger’s gate with a transfer the payer named for its own, once a reorg mined it again at another log index', async () => {
    // The reconciler looked for a payment of the transfer's log index as it is now: the payer's
    // proof, recorded at its index before the reorg, was not found, and the stranger's claim was
    // finalized with the same transfer (helper-361).
    const payer = newWallet();
    const other = newWallet();
    await fundUsdc(app, payer.address, '1');
    await fundUsdc(app, other.address, '1');
    await fundEth(app, other.address);
    const own = await openGate(app, site, '/reorged/own');
    const strangers = await openGate(app, site, '/reorged/strangers');
    const payment = await signPayment(app, payer, own);

    const chain = devTestClient(app.chain.rpcUrl);
    await chain.setAutomine(false);
    let relayed: Hash;
    let beforeMined: Hex;
    try {
      relayed = await sendAuthorizationAsStranger(app, payment);
      expect((await app.call('POST', `/v1/gates/${strangers.id}/verify`, { body: { payment } })).status).not.toBe(200);
      beforeMined = await snapshot(app.chain.rpcUrl);
    } finally {
      await chain.mine({ blocks: 1 });
      await chain.setAutomine(true);
    }
    const first = await app.chain.publicClient.waitForTransactionReceipt({ hash: relayed });
    const proof = await app.call('POST', `/v1/gates/${own.id}/verify`, {
      body: {
        tx_hash: relayed,
        signature: await payer.signMessage({ message: transferProofMessage(own.ref, relayed) }),
      },
    });
    expect(proof.status === 200 ? 200 : proof).toBe(200);

    // The reorg: the same transaction mined again, behind another USDC transfer with a higher tip.
    await mineAgainBehindAnother(app, { hash: relayed, snapshot: beforeMined!, ahead: other });
    const second = await app.chain.publicClient.getTransactionReceipt({ hash: relayed });
    expect(second.status).toBe('success');
    expect(second.logs.map((log) => log.logIndex)).not.toEqual(first.logs.map((log) => log.logIndex));

    // Past the hold on transfers not our relayer's (120 s here), the stranger's claim old enough: the reconciler judges it now.
    await increaseTime(app.chain.rpcUrl, 121);
    await sleep(2_100);
    await app.app.get(ReconcilerService).runOnce();
    const stolen = await app.call('POST', `/v1/gates/${strangers.id}/verify`, { body: { payment } });
    expect(stolen.body.access_token).toBeUndefined();
  });
});
