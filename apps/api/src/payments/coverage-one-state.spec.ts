import { USDC_ABI } from '@crawlgate/core';
import { encodeAbiParameters, numberToHex, type Hash, type Hex } from 'viem';
import { openGate, siteAtPrice, type TestSite } from '../../test/fixtures';
import { pausedAt } from '../../test/pause-at';
import { startRpcRewriter, type RpcRewriter } from '../../test/rpc-rewriter';
import { fundUsdc, newWallet, paymentsOfOnePayer, signPayment, usdcBalance } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { workerChain } from '../../test/test-chain';
import { PaymentStore } from './payment.store';
import { RelayRefusalsStore } from './relay-refusals.store';
import { PaymentsService } from './payments.service';

/** A USDC balanceOf call's selector. */
const BALANCE_OF = '0x70a08231';

/**
 * A payer's second payment is judged while its first is mined but not yet recorded as settled: the
 * first's authorization reads as used, and the balance must then read without its amount. A
 * `latest` read made after another need not come from a later state: anvil, mid-mine, answers a
 * call it resolved to the block before from that block's stored state after an earlier call read
 * the new one (a 202 among the 402s of overlapping-settlements, once in CI), and a node behind a
 * load balancer may lag the one that answered before. The node here answers the payer's balance
 * read from the block before the first settlement; a single call is answered from one state. And
 * funds that leave after the checks: the gas estimate made to send the settlement reverts.
 */
describe('a payer’s funds between its checks and its broadcast', () => {
  let rewriter: RpcRewriter;
  let app: TestApp;
  let dear: TestSite;
  /** The balanceOf answer a lagging node gives, once set; the node's own answer before. */
  let staleBalance: { payer: string; answer: Hex } | undefined;
  /** A payer (lower-case, unprefixed) whose settlements' gas estimates the node answers with a revert, once set. */
  let estimateReverts: string | undefined;
  /** A payer (lower-case, unprefixed) whose settlements' gas estimates the node fails without running them (the relayer's gas money, its rate), once set. */
  let estimateFails: { payer: string; error: { code: number; message: string } } | undefined;
  /**
   * A payer (lower-case, unprefixed) whose `latest` reads (eth_call, its estimates) a lagging node
   * answers from `block`, once set: a node behind a load balancer, a block or two behind the one
   * that answered the receipts.
   */
  let lagging: { payer: string; block: bigint } | undefined;

  beforeAll(async () => {
    rewriter = await startRpcRewriter(
      workerChain().rpcUrl,
      ({ method, params, result }) => {
        const call = params[0] as { data?: string; input?: string } | undefined;
        const data = (call?.data ?? call?.input ?? '').toLowerCase();
        return method === 'eth_call' && staleBalance && data === BALANCE_OF + staleBalance.payer
          ? staleBalance.answer
          : result;
      },
      (call) => lag(call) ?? failEstimate(call) ?? refuseEstimate(call),
    );
    app = await startTestApp({ chainRpcUrl: rewriter.url, isolateChain: true });
    dear = await siteAtPrice(app, newWallet(), '0.5');
  });
  /** The node's answer when a settlement's estimate runs it after its payer's funds left. */
  const refuseEstimate = ({ method, params }: { method: string; params: unknown[] }) =>
    estimateReverts &&
    (method === 'eth_estimateGas' || method === 'eth_fillTransaction') &&
    JSON.stringify(params).toLowerCase().includes(estimateReverts)
      ? { code: 3, message: 'execution reverted: ERC20: transfer amount exceeds balance' }
      : undefined;
  /** The node's error for an estimate it did not run: nothing about the payer's funds or signature. */
  const failEstimate = ({ method, params }: { method: string; params: unknown[] }) =>
    estimateFails &&
    (method === 'eth_estimateGas' || method === 'eth_fillTransaction') &&
    JSON.stringify(params).toLowerCase().includes(estimateFails.payer)
      ? estimateFails.error
      : undefined;
  /** Sends the payer's `latest` reads on to the block the lagging node is at (its params rewritten in place). */
  const lag = ({ method, params }: { method: string; params: unknown[] }) => {
    if (
      lagging &&
      ['eth_call', 'eth_estimateGas', 'eth_fillTransaction'].includes(method) &&
      JSON.stringify(params[0]).toLowerCase().includes(lagging.payer) &&
      (params[1] === undefined || params[1] === 'latest')
    )
      params[1] = numberToHex(lagging.block);
    return undefined;
  };
  afterAll(async () => {
    await app.close();
    await rewriter.close();
  });

  it('sends nothing for a payment read against a balance from before its payer’s settlement just mined', async () => {
    const { agent, verify, relayerSent } = await paymentsOfOnePayer(app, dear, '0.5', ['/one-state/0', '/one-state/1']);

    // The first settlement is broadcast and held before its claim is marked sent: in flight still.
    const store = app.app.get(PaymentStore);
    const markSubmitted = store.markSubmitted.bind(store);
    let broadcast!: (hash: Hash) => void;
    const sent = new Promise<Hash>((resolve) => (broadcast = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    jest.spyOn(store, 'markSubmitted').mockImplementationOnce(async (id, hash) => {
      broadcast(hash as Hash);
      await released;
      return markSubmitted(id, hash);
    });

    // The second request, its simulation passed, waits before its claim until the first is mined.
    let first!: ReturnType<typeof verify>;
    const second = await pausedAt(
      app.app.get(PaymentsService),
      'claimAsTermsStand',
      async () => {
        first = verify(0);
        const receipt = await app.chain.publicClient.waitForTransactionReceipt({ hash: await sent });
        const before = await app.chain.publicClient.readContract({
          address: app.chain.usdc,
          abi: USDC_ABI,
          functionName: 'balanceOf',
          args: [agent.address],
          blockNumber: receipt.blockNumber - 1n,
        });
        staleBalance = {
          payer: agent.address.slice(2).toLowerCase().padStart(64, '0'),
          answer: encodeAbiParameters([{ type: 'uint256' }], [before]),
        };
      },
      () => verify(1),
    );
    staleBalance = undefined;
    release();
    const answers = [await first, second];

    expect({
      answers: answers.map((a) => `${a.status} ${a.status === 402 ? a.body.reason : (a.body.detail ?? 'paid')}`),
      broadcast: await relayerSent(),
      balance: await usdcBalance(app, agent.address),
    }).toEqual({ answers: ['200 paid', '402 insufficient_funds'], broadcast: 1, balance: 0n });
  }, 30_000);

  it('frees the gate when the gas estimate made to send it reverts after its checks passed: 402, nothing sent, the same payment pays later', async () => {
    const { agent, verify, relayerSent } = await paymentsOfOnePayer(app, dear, '0.5', ['/one-state/estimate']);

    // Its simulation and its balance check pass; both estimates (beside the claim, and again to send) revert.
    estimateReverts = agent.address.slice(2).toLowerCase();
    const refused = await verify(0).finally(() => (estimateReverts = undefined));

    expect({
      answer: `${refused.status} ${refused.body.reason ?? refused.body.detail}`,
      broadcast: await relayerSent(),
      recorded: await app.database.prisma.payment.count({ where: { payer: agent.address.toLowerCase() } }),
    }).toEqual({ answer: '402 insufficient_funds', broadcast: 0, recorded: 0 });
    const paid = await verify(0);
    expect(paid.status).toBe(200);
    expect(await usdcBalance(app, agent.address)).toBe(0n);
  }, 30_000);

  it('refuses a payment judged on a node a block behind its payer’s settlement just confirmed: 402, nothing sent, the payer not refused', async () => {
    const { agent, verify, relayerSent } = await paymentsOfOnePayer(app, dear, '0.5', [
      '/one-state/lag/0',
      '/one-state/lag/1',
    ]);

    // The first pays and is confirmed: it is no longer in flight.
    const first = await verify(0);
    expect(first.status).toBe(200);
    const settled = await app.database.prisma.payment.findFirstOrThrow({
      where: { payer: agent.address.toLowerCase(), status: 'confirmed' },
    });
    const sentBefore = await relayerSent();

    // The node that answers the second payment's reads lags: it is at the block before the first settlement.
    lagging = { payer: agent.address.slice(2).toLowerCase(), block: settled.blockNumber! - 1n };
    const second = await verify(1).finally(() => (lagging = undefined));

    expect({
      answer: `${second.status} ${second.status === 402 ? second.body.reason : second.body.detail}`,
      broadcast: (await relayerSent()) - sentBefore,
      refused: await app.app.get(RelayRefusalsStore).isRefused(app.chain.chainId, agent.address),
    }).toEqual({ answer: '402 insufficient_funds', broadcast: 0, refused: false });
  }, 30_000);

  it('answers 503 when the node fails the gas estimate without running it (the relayer’s gas money, a rate limit): never a 402 blaming the payment', async () => {
    const agent = newWallet();
    await fundUsdc(app, agent.address, '0.5');
    const failures = [
      { code: -32000, message: 'insufficient funds for gas * price + value: have 0 want 3000000000000' },
      { code: -32005, message: 'request rate exceeded' },
    ];
    const answers: string[] = [];
    for (const [i, error] of failures.entries()) {
      const gate = await openGate(app, dear, `/one-state/estimate-fails/${i}`);
      const payment = await signPayment(app, agent, gate);
      estimateFails = { payer: agent.address.slice(2).toLowerCase(), error };
      const answer = await app
        .call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } })
        .finally(() => (estimateFails = undefined));
      answers.push(`${answer.status} ${answer.body.reason ?? 'no reason'}`);
    }

    expect({
      answers,
      recorded: await app.database.prisma.payment.count({ where: { payer: agent.address.toLowerCase() } }),
    }).toEqual({ answers: ['503 no reason', '503 no reason'], recorded: 0 });
  }, 30_000);
});
