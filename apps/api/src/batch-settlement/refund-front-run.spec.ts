import { BATCH_REASONS, BATCH_SETTLEMENT_ABI } from '@crawlgate/core';
import { devTestClient, devWalletClient, increaseTime } from '@crawlgate/devchain';
import { randomUUID } from 'node:crypto';
import { decodeFunctionData, type Hash, type Hex } from 'viem';
import { batchSettlementSite, type TestSite } from '../../test/fixtures';
import { fundEth, fundUsdc, newWallet, usdcBalance } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { batchOffer, escrowRead, testChannel, type BatchOffer } from '../../test/test-channel';
import { loadConfig } from '../config/config';
import { ClaimerService } from './claimer.service';

/*
 * A payer whose timed withdrawal is past its delay asks for a cooperative refund, then front-runs
 * the refund transaction: it finalizes its withdrawal and sends the refund call lifted from the
 * pending transaction's calldata alone, ahead of it. Whatever the refund returned must leave the
 * channel holding every voucher taken, for the claimer to collect: a refund never returns money
 * a pending withdrawal may also take.
 */
describe('a refund front-run by the payer’s own withdrawal and the lifted refund signature', () => {
  let app: TestApp;
  const PRICE = 10_000n;
  const DEPOSIT = 100_000n;
  /** Each test's channel, each to its own receiver: a withdrawal of 50,000, and one of 30,000, both past their delay. */
  let whole: WithdrawingChannel;
  let part: WithdrawingChannel;

  beforeAll(async () => {
    // No claimer in the background: the payer times its attack between runs.
    const batchSettlement = { ...loadConfig({}).chain.batchSettlement, claimIntervalMs: 0, channelStateReuseMs: 0 };
    app = await startTestApp({ isolateChain: true, config: { chain: { batchSettlement } } });
    // Deposits first: the deposit authorizations are timed by the wall clock, which the chain's then leaves behind.
    whole = await withdrawingChannel(50_000n);
    part = await withdrawingChannel(30_000n);
    await increaseTime(app.chain.rpcUrl, app.chain.batchSettlement!.withdrawDelaySeconds + 1);
  }, 60_000);
  afterAll(() => app.close());

  const gate = async (site: TestSite): Promise<BatchOffer> =>
    batchOffer(
      await app.call('POST', '/v1/gates', {
        body: { url: `/front-run/${randomUUID()}` },
        headers: { 'x-site-token': site.siteToken },
      }),
    );
  const verify = (offer: BatchOffer, payment: unknown) =>
    app.call('POST', `/v1/gates/${offer.id}/verify`, { body: { payment } });
  const escrow = () => app.chain.batchSettlement!.escrow;
  const channelOnChain = (channelId: Hex) => escrowRead<readonly [bigint, bigint]>(app, 'channels', channelId);
  const relayerNonce = () =>
    app.chain.publicClient.getTransactionCount({ address: app.chain.relayer.account.address, blockTag: 'pending' });

  /**
   * A payer's channel to a new site's receiver `payTo` holding DEPOSIT, charged one page, whose payer then started withdrawing
   * `withdrawn`; pay(charged) pays the pages up to `charged` (once the delay has passed: beforeAll).
   */
  async function withdrawingChannel(withdrawn: bigint) {
    const payTo = newWallet().address;
    const { site } = await batchSettlementSite(app, payTo);
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    await fundEth(app, payer.address);
    const first = await gate(site);
    const channel = testChannel(app, payer, first.accepted);
    expect((await verify(first, await channel.payment(first, PRICE, { deposit: DEPOSIT }))).status).toBe(200);
    const wallet = devWalletClient(app.chain.rpcUrl, app.chain.chainId, payer);
    const started = await wallet.writeContract({
      address: escrow(),
      abi: BATCH_SETTLEMENT_ABI,
      functionName: 'initiateWithdraw',
      args: [channel.config, withdrawn],
    });
    await app.chain.publicClient.waitForTransactionReceipt({ hash: started });
    let charged = PRICE;
    const pay = async (upTo: bigint) => {
      for (charged += PRICE; charged <= upTo; charged += PRICE) {
        const offer = await gate(site);
        expect((await verify(offer, await channel.payment(offer, charged))).status).toBe(200);
      }
      charged -= PRICE;
    };
    const refund = async (offer: BatchOffer) => {
      const payment = await channel.payment(offer, charged);
      return { ...payment, payload: { ...payment.payload, type: 'refund' } };
    };
    return { payTo, site, payer, wallet, channel, pay, refund };
  }
  type WithdrawingChannel = Awaited<ReturnType<typeof withdrawingChannel>>;

  /**
   * Asks for the refund with blocks mined only by hand; once the API broadcast it, the payer sends
   * finalizeWithdraw and the refund call lifted from it, with a higher tip, and one block is mined.
   */
  async function refundFrontRun({ site, wallet, channel, refund }: WithdrawingChannel) {
    const chain = devTestClient(app.chain.rpcUrl);
    const offer = await gate(site);
    await chain.setAutomine(false);
    try {
      const answer = verify(offer, await refund(offer));
      const hash = await broadcastRefund(channel.channelId, answer);
      if (!hash) return answer;
      const sent = await app.chain.publicClient.getTransaction({ hash });
      const calls = decodeFunctionData({ abi: BATCH_SETTLEMENT_ABI, data: sent.input }).args[0] as readonly Hex[];
      const lifted = decodeFunctionData({ abi: BATCH_SETTLEMENT_ABI, data: calls.at(-1)! });
      expect(lifted.functionName).toBe('refundWithSignature');
      const tip = sent.maxPriorityFeePerGas! * 2n + 1_000_000_000n;
      const fees = { maxPriorityFeePerGas: tip, maxFeePerGas: sent.maxFeePerGas! + tip, gas: 300_000n };
      const nonce = await app.chain.publicClient.getTransactionCount({
        address: wallet.account.address,
        blockTag: 'pending',
      });
      await wallet.writeContract({
        address: escrow(),
        abi: BATCH_SETTLEMENT_ABI,
        functionName: 'finalizeWithdraw',
        args: [channel.config],
        nonce,
        ...fees,
      });
      await wallet.sendTransaction({ to: escrow(), data: calls.at(-1)!, nonce: nonce + 1, ...fees });
      await chain.mine({ blocks: 1 });
      return answer;
    } finally {
      await chain.setAutomine(true);
      await chain.mine({ blocks: 1 });
    }
  }

  /** The refund transaction the API stored and broadcast; undefined when the request was answered without one. */
  async function broadcastRefund(channelId: Hex, answer: Promise<unknown>): Promise<Hash | undefined> {
    let answered = false;
    const settled = () => void (answered = true);
    answer.then(settled, settled);
    for (const started = Date.now(); Date.now() - started < 10_000;) {
      const [row] = await app.database.sql.query<{ refund_tx: string | null }>(
        'SELECT refund_tx FROM payment_channels WHERE channel_id = $1',
        [channelId],
      );
      const hash = row?.refund_tx?.trim() as Hash | undefined;
      if (hash && (await app.chain.publicClient.getTransaction({ hash }).catch(() => null))) return hash;
      if (answered) return undefined;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error('the refund was neither sent nor answered');
  }

  it('refunds nothing when the pending withdrawal takes all that vouchers left: the receiver gets every page', async () => {
    // Deposit 100,000; a withdrawal of 50,000 due; five pages charged 50,000, all that was spendable.
    const attack = whole;
    await attack.pay(5n * PRICE);
    const nonce = await relayerNonce();
    const answer = await refundFrontRun(attack);
    expect([answer.status, answer.body.reason]).toEqual([402, BATCH_REASONS.refundNoBalance]);
    expect(await relayerNonce()).toBe(nonce);

    // Its withdrawal pays the payer back the 50,000 it did not spend, and leaves the 50,000 it did.
    const finished = await attack.wallet.writeContract({
      address: escrow(),
      abi: BATCH_SETTLEMENT_ABI,
      functionName: 'finalizeWithdraw',
      args: [attack.channel.config],
    });
    await app.chain.publicClient.waitForTransactionReceipt({ hash: finished });
    await app.app.get(ClaimerService).runOnce({ force: true });
    expect(await channelOnChain(attack.channel.channelId)).toEqual([5n * PRICE, 5n * PRICE]);
    expect(await usdcBalance(app, attack.payTo)).toBe(5n * PRICE);
    expect(await usdcBalance(app, attack.payer.address)).toBe(1_000_000n - 5n * PRICE);
  }, 60_000);

  it('returns only what neither the withdrawal nor the vouchers take: the lifted refund leaves every page claimable', async () => {
    // Deposit 100,000; a withdrawal of 30,000 due; five pages charged 50,000: 20,000 may be refunded.
    const attack = part;
    await attack.pay(5n * PRICE);
    const answer = await refundFrontRun(attack);
    // The payer's own copy landed first and moved the refund nonce: ours reverted.
    expect([answer.status, answer.body.reason]).toEqual([402, BATCH_REASONS.refundTransactionFailed]);
    // (The first test's claimer run claimed this channel's first page.)
    expect((await channelOnChain(attack.channel.channelId))[0]).toBe(5n * PRICE);
    expect(await usdcBalance(app, attack.payer.address)).toBe(1_000_000n - 5n * PRICE);

    await app.app.get(ClaimerService).runOnce({ force: true });
    expect(await channelOnChain(attack.channel.channelId)).toEqual([5n * PRICE, 5n * PRICE]);
    expect(await usdcBalance(app, attack.payTo)).toBe(5n * PRICE);
  }, 60_000);
});
