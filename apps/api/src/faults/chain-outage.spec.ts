import { readGate } from '@crawlgate/core';
import { batchSettlementSite, openGate, pricedSite, type TestSite } from '../../test/fixtures';
import { fundUsdc, newWallet, signPayment, transfersTo, usdcBalance } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { workerChain } from '../../test/test-chain';
import { startTcpProxy, type Direction, type TcpProxy } from '../../test/tcp-proxy';
import { batchOffer, testChannel } from '../../test/test-channel';
import { ReconcilerService } from '../payments/reconciler.service';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the chain RPC going away and coming back', () => {
  let proxy: TcpProxy;
  let app: TestApp;
  let site: TestSite;
  // Its key signs each publisher's proof: several publishers here name this one address.
  const payee = newWallet();
  const payTo = payee.address;
  const agent = newWallet();
  /** Sees the JSON-RPC traffic; a test sets it to cut at an exact moment of a settlement. */
  let onRpc: ((text: string, direction: Direction, connection: number) => boolean | 'reset' | void) | undefined;

  beforeAll(async () => {
    const rpc = new URL(workerChain().rpcUrl);
    proxy = await startTcpProxy(rpc.hostname, Number(rpc.port), {
      tap: (chunk, direction, connection) => onRpc?.(chunk.toString(), direction, connection),
    });
    // A short settlement timeout, so a claim whose broadcast went unanswered is the reconciler's after
    // 2 s; and a short RPC timeout, so a broadcast whose answer is dropped is given up on after 3 s, not 10.
    app = await startTestApp({
      chainRpcUrl: `http://127.0.0.1:${proxy.port}`,
      isolateChain: true,
      config: { chain: { settlementTimeoutMs: 1_000, rpcTimeoutMs: 3_000 } },
    });
    ({ site } = await pricedSite(app, payee));
    await fundUsdc(app, agent.address, '1');
  });
  afterAll(async () => {
    onRpc = undefined;
    await proxy.restore();
    await app.close();
    await proxy.close();
  });
  afterEach(async () => {
    onRpc = undefined;
    await proxy.restore();
  });

  const verify = (gateId: string, payment: unknown) =>
    app.call('POST', `/v1/gates/${gateId}/verify`, { body: { payment } });
  const paymentRows = (gateId: string) =>
    app.database.prisma.payment.count({ where: { gateId: readGate(gateId)!.ref } });
  const reconcile = () => app.app.get(ReconcilerService).runOnce();

  /** Cuts the RPC once the relayer's broadcast reached the node: before its answer, or just after it. */
  function cutAroundBroadcast(when: 'answer-lost' | 'receipt-lost'): void {
    let broadcastOn: number | undefined;
    let answered = false;
    onRpc = (text, direction, connection) => {
      if (direction === 'to-target' && text.includes('eth_sendRawTransaction')) broadcastOn = connection;
      else if (direction === 'to-client' && connection === broadcastOn && when === 'answer-lost') return cut();
      else if (direction === 'to-client' && connection === broadcastOn) answered = true;
      // The first request after the hash came back (the receipt poll) finds the chain gone.
      else if (direction === 'to-target' && answered) return cut();
    };
    const cut = () => {
      onRpc = undefined;
      void proxy.cut();
      return false;
    };
  }

  /**
   * Lets the relayer's broadcast reach the node (which mines it) and drops the node's answer, the
   * connection left up: the API gives up on it by its own timeout, not by a reset.
   */
  function dropBroadcastAnswer(): void {
    let broadcastOn: number | undefined;
    onRpc = (text, direction, connection) => {
      if (direction === 'to-target' && text.includes('eth_sendRawTransaction')) broadcastOn = connection;
      else if (direction === 'to-client' && connection === broadcastOn) return false;
    };
  }

  /** A funded payer's first page of a batch-settlement site at `url`, paid with a voucher and a deposit of $0.05. */
  async function depositToPay(url: string) {
    const { site: channelSite } = await batchSettlementSite(app, payee);
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    const offer = batchOffer(
      await app.call('POST', '/v1/gates', { body: { url }, headers: { 'x-site-token': channelSite.siteToken } }),
    );
    const payment = await testChannel(app, payer, offer.accepted).payment(offer, 10_000n, { deposit: 50_000n });
    return { payer, offer, payment };
  }

  /** Runs the reconciler until it has finished this gate's payment (a claim without a hash waits 2 s first). */
  async function reconcileUntilPaid(gateId: string): Promise<void> {
    for (const started = Date.now(); Date.now() - started < 8_000; await sleep(250)) {
      await reconcile();
      if ((await app.call('GET', `/v1/gates/${gateId}`)).body.status === 'paid') return;
    }
    throw new Error(`gate ${gateId} was not paid by the reconciler`);
  }

  it('answers 503 while the RPC is down: nothing charged, the gate stays open, gates can still be created; the same proof pays once it is back', async () => {
    const gate = await openGate(app, site, '/outage/before');
    const payment = await signPayment(app, agent, gate);
    const balance = await usdcBalance(app, agent.address);
    const transfers = (await transfersTo(app, payTo)).length;

    await proxy.cut();
    const refused = await verify(gate.id, payment);
    expect(refused.status).toBe(503);
    expect(refused.body.detail).toMatch(/unreachable/);
    expect((await app.call('GET', `/v1/gates/${gate.id}`)).body.status).toBe('open');
    expect(await paymentRows(gate.id)).toBe(0);
    await openGate(app, site, '/outage/during'); // creating a gate needs no RPC

    await proxy.restore();
    const paid = await verify(gate.id, payment);
    expect(paid.status).toBe(200);
    const after = await transfersTo(app, payTo);
    expect(after).toHaveLength(transfers + 1);
    expect(after.filter((t) => t.hash === paid.body.tx_hash)).toEqual([
      { from: agent.address, value: BigInt(gate.amount), hash: paid.body.tx_hash },
    ]);
    expect(await usdcBalance(app, agent.address)).toBe(balance - BigInt(gate.amount));
  });

  it.each(['receipt-lost', 'answer-lost'] as const)(
    'never loses a payment when the RPC goes down after the broadcast (%s): 202, then the reconciler records it, once',
    async (when) => {
      const gate = await openGate(app, site, `/outage/${when}`);
      const payment = await signPayment(app, agent, gate);
      const balance = await usdcBalance(app, agent.address);

      cutAroundBroadcast(when);
      const pending = await verify(gate.id, payment);
      expect(pending.status).toBe(202);
      expect(pending.body).toMatchObject({ status: 'settlement_pending', gate_id: gate.id });
      expect((await app.call('GET', `/v1/gates/${gate.id}`)).body.status).toBe('settling');
      expect(await paymentRows(gate.id)).toBe(1);

      await proxy.restore();
      await reconcileUntilPaid(gate.id);
      const paid = await verify(gate.id, payment);
      expect(paid.status).toBe(200);
      if (pending.body.tx_hash) expect(paid.body.tx_hash).toBe(pending.body.tx_hash);
      expect((await transfersTo(app, payTo)).filter((t) => t.hash === paid.body.tx_hash)).toHaveLength(1);
      expect(await usdcBalance(app, agent.address)).toBe(balance - BigInt(gate.amount));
    },
  );

  it('never releases a settlement whose broadcast went unanswered but was mined (the transport timed out): 202 with its hash, then paid, once', async () => {
    const gate = await openGate(app, site, '/outage/answer-dropped');
    const payment = await signPayment(app, agent, gate);
    const balance = await usdcBalance(app, agent.address);

    dropBroadcastAnswer();
    const pending = await verify(gate.id, payment);
    onRpc = undefined;
    const mined = (await transfersTo(app, payTo)).filter((t) => t.from === agent.address);
    expect(await usdcBalance(app, agent.address)).toBe(balance - BigInt(gate.amount)); // the chain took it
    expect(pending.status).toBe(202);
    expect(pending.body).toMatchObject({ status: 'settlement_pending', gate_id: gate.id });
    expect(pending.body.tx_hash).toBe(mined.at(-1)!.hash);
    expect((await app.call('GET', `/v1/gates/${gate.id}`)).body.status).toBe('settling');

    await reconcileUntilPaid(gate.id);
    const paid = await verify(gate.id, payment);
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ status: 'paid', tx_hash: pending.body.tx_hash });
    expect(paid.body.access_token).toEqual(expect.any(String));
    expect((await transfersTo(app, payTo)).filter((t) => t.hash === paid.body.tx_hash)).toHaveLength(1);
    expect(await usdcBalance(app, agent.address)).toBe(balance - BigInt(gate.amount));
  });

  it('answers a deposit whose broadcast went unanswered but was mined as maybe sent, its payer’s lease kept; the same payment then pays, deposited once', async () => {
    const { payer, offer, payment } = await depositToPay('/outage/deposit');
    const balance = await usdcBalance(app, payer.address);
    const leases = () =>
      app.database.sql.query('SELECT payer FROM deposit_leases WHERE payer = $1', [payer.address.toLowerCase()]);

    dropBroadcastAnswer();
    const unsure = await verify(offer.id, payment);
    onRpc = undefined;
    expect(await usdcBalance(app, payer.address)).toBe(balance - 50_000n); // the deposit landed
    expect(unsure.status).toBe(503);
    expect(unsure.body.detail).toMatch(/may have been sent/);
    expect(await leases()).toHaveLength(1);

    const paid = await verify(offer.id, payment);
    expect(paid.status).toBe(200);
    expect(await usdcBalance(app, payer.address)).toBe(balance - 50_000n);
    expect(await leases()).toEqual([]);
  });

  it('sends again, at its relayer nonce, a deposit whose broadcast the node never got though its connection took it', async () => {
    const { payer, offer, payment } = await depositToPay('/outage/deposit-lost');
    const balance = await usdcBalance(app, payer.address);
    const relayerNonce = () =>
      app.chain.publicClient.getTransactionCount({ address: app.chain.relayer.account.address, blockTag: 'pending' });
    const sentBefore = await relayerNonce();

    // The broadcast's request is dropped on its way and its connection reset: it may have reached
    // the node (503, its lease and row kept), and it did not.
    onRpc = (text, direction) => {
      if (direction !== 'to-target' || !text.includes('eth_sendRawTransaction')) return;
      onRpc = undefined;
      return 'reset';
    };
    const unsure = await verify(offer.id, payment);
    expect([unsure.status, unsure.body.detail]).toEqual([503, expect.stringMatching(/may have been sent/)]);
    expect(await usdcBalance(app, payer.address)).toBe(balance);
    // Its lease stale (taken over after 120 s), the payer sends the same payment again: at the relayer
    // nonce its first copy was written down at, still free, so at most one of the two can be mined.
    await app.database.sql.query(`UPDATE deposit_leases SET taken_at = now() - interval '3 minutes' WHERE payer = $1`, [
      payer.address.toLowerCase(),
    ]);
    const paid = await verify(offer.id, payment);
    expect({ status: paid.status, sent: (await relayerNonce()) - sentBefore }).toEqual({ status: 200, sent: 1 });
    expect(await usdcBalance(app, payer.address)).toBe(balance - 50_000n);
  });
  it('answers a voucher sent again through another gate of its page with 503 while the RPC is down (whether it is public cannot be read): no token, nothing charged; once back, its own token', async () => {
    const { site: channelSite } = await batchSettlementSite(app, payee);
    const gateOf = async (url: string) =>
      batchOffer(
        await app.call('POST', '/v1/gates', { body: { url }, headers: { 'x-site-token': channelSite.siteToken } }),
      );
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    const first = await gateOf('/outage/voucher-first');
    const channel = testChannel(app, payer, first.accepted);
    expect((await verify(first.id, await channel.payment(first, 10_000n, { deposit: 50_000n }))).status).toBe(200);
    const path = '/outage/voucher-lost';
    const own = await gateOf(path);
    const payment = await channel.payment(own, 20_000n);
    const paid = await verify(own.id, payment);
    expect(paid.status).toBe(200);
    const charged = async () =>
      (await app.database.prisma.paymentChannel.findUnique({ where: { channelId: channel.channelId } }))!.charged;
    // Past the window in which a state read a moment ago is used: the resend has to read the chain.
    await sleep(app.config.chain.batchSettlement.channelStateReuseMs + 200);

    await proxy.cut();
    const samePage = await gateOf(path);
    const resent = { ...payment, accepted: samePage.accepted };
    const unsure = await verify(samePage.id, resent);
    expect([unsure.status, unsure.body.detail, unsure.body.access_token]).toEqual([503, expect.any(String), undefined]);
    expect((await app.call('GET', `/v1/gates/${samePage.id}`)).body.status).toBe('open');
    expect(await charged()).toBe(20_000n);

    await proxy.restore();
    const answered = await verify(samePage.id, resent);
    expect([answered.status, answered.body.access_token]).toEqual([200, paid.body.access_token]);
    expect(await charged()).toBe(20_000n);
  });
});
