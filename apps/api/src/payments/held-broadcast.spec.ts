import { randomBytes } from 'node:crypto';
import { openGate, pricedSite, type TestSite } from '../../test/fixtures';
import { startProxiedTestApp, type ProxiedTestApp } from '../../test/proxied-test-app';
import { fundUsdc, newWallet, signPayment, transfersTo } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { ReconcilerService } from './reconciler.service';
import type { RelayerTurn } from '../chain/relayer-nonces';

// The chain's RPC is reached through a fault proxy, so this file runs on PostgreSQL even on a PGlite run.
/** A claim not broadcast this long is the reconciler's (at least 2 s: ReconcilerService). */
const SETTLEMENT_TIMEOUT_MS = 2_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A request whose broadcast is held up past the settlement timeout (a slow RPC's read of the
 * relayer's next nonce), while the reconciler takes up its claim, still unsent: whichever of the
 * two broadcasts first settles it, and the other sends nothing. Both sent it, and the relayer paid
 * gas for the copy that reverted.
 */
describe('a settlement whose request is held in its broadcast turn past the settlement timeout', () => {
  let proxied: ProxiedTestApp;
  let app: TestApp;
  let site: TestSite;
  const payTo = newWallet().address;
  const masterKey = randomBytes(32);
  const config = { chain: { settlementTimeoutMs: SETTLEMENT_TIMEOUT_MS } };

  beforeAll(async () => {
    proxied = await startProxiedTestApp({ config, masterKey });
    app = proxied.app;
    ({ site } = await pricedSite(app, payTo));
  });
  afterAll(() => proxied.close());

  /** A funded agent's payment for a fresh gate, and the relayer's count of transactions sent. */
  async function paymentForGate(path: string) {
    const agent = newWallet();
    await fundUsdc(app, agent.address, '1');
    const gate = await openGate(app, site, path);
    const payment = await signPayment(app, agent, gate);
    const relayer = app.chain.relayer.account.address;
    const pendingCount = () => app.chain.publicClient.getTransactionCount({ address: relayer, blockTag: 'pending' });
    return { agent, gate, payment, pendingCount, sentBefore: await pendingCount() };
  }

  /** Holds the next RPC request naming `method` (the request's, in its broadcast turn) until `release()`. */
  function holdNextRpc(method: 'eth_getTransactionCount' | 'eth_sendRawTransaction') {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let heldNow!: () => void;
    const held = new Promise<void>((resolve) => (heldNow = resolve));
    proxied.onRpc((text) => {
      if (!text.includes(method)) return;
      proxied.onRpc(undefined);
      heldNow();
      return released;
    });
    return { held, release };
  }

  /**
   * Pays `paying` while `hold` holds its request in its broadcast turn past the claim wait, running
   * this instance's reconciler until it has judged the claim and queued for the turn behind the
   * request's (so the race takes place), then releases the request: its answer.
   */
  async function payWithReconcilerQueuedBehind(
    paying: Awaited<ReturnType<typeof paymentForGate>>,
    hold: ReturnType<typeof holdNextRpc>,
  ) {
    const nonces = app.chain.relayerNonces;
    const send = nonces.send.bind(nonces);
    let queued!: () => void;
    const reconcilerQueued = new Promise<void>((resolve) => (queued = resolve));
    let turns = 0;
    const turnSpy = jest.spyOn(nonces, 'send').mockImplementation(((
      broadcast: (nonce: number) => Promise<unknown>,
      turn: RelayerTurn,
    ) => {
      if (++turns === 2) queued();
      return send(broadcast, turn);
    }) as typeof nonces.send);
    try {
      const answer = app.call('POST', `/v1/gates/${paying.gate.id}/verify`, { body: { payment: paying.payment } });
      await hold.held;
      await sleep(SETTLEMENT_TIMEOUT_MS + 500);
      let reconciled: Promise<unknown> = Promise.resolve();
      for (let pass = 0; pass < 10 && turns < 2; pass++) {
        reconciled = app.app.get(ReconcilerService).runOnce();
        await Promise.race([reconcilerQueued, reconciled.then(() => sleep(200))]);
      }
      expect(turns).toBe(2);
      hold.release();
      await reconciled;
      return await answer;
    } finally {
      hold.release();
      proxied.onRpc(undefined);
      turnSpy.mockRestore();
    }
  }

  /** Paid once, by one transaction of the relayer's: the row confirmed with it, the client with its token. */
  async function expectPaidOnce(
    { agent, gate, pendingCount, sentBefore }: Awaited<ReturnType<typeof paymentForGate>>,
    paid: Awaited<ReturnType<TestApp['call']>>,
  ) {
    expect(paid.status).toBe(200);
    expect(paid.body.access_token).toEqual(expect.any(String));
    expect((await pendingCount()) - sentBefore).toBe(1);
    const row = await app.database.prisma.payment.findUniqueOrThrow({ where: { gateId: gate.ref } });
    expect({ status: row.status, txHash: row.txHash }).toEqual({ status: 'confirmed', txHash: paid.body.tx_hash });
    expect((await transfersTo(app, payTo)).filter((transfer) => transfer.hash === paid.body.tx_hash)).toEqual([
      { from: agent.address, value: BigInt(gate.amount), hash: paid.body.tx_hash },
    ]);
  }

  it('is broadcast once, by the request, when this instance’s reconciler takes up the claim meanwhile: paid with a token, recorded confirmed', async () => {
    const paying = await paymentForGate('/held/request-first');
    await expectPaidOnce(paying, await payWithReconcilerQueuedBehind(paying, holdNextRpc('eth_getTransactionCount')));
  }, 30_000);

  it('is broadcast once when the request’s own send is slower than the claim wait: the reconciler, queued behind it, finds it at the node', async () => {
    const paying = await paymentForGate('/held/slow-send');
    // Its claim taken and its hash recorded, the request's send is held.
    await expectPaidOnce(paying, await payWithReconcilerQueuedBehind(paying, holdNextRpc('eth_sendRawTransaction')));
  }, 30_000);

  it('is broadcast once, by the request, when another instance’s reconciler takes up the claim meanwhile: it waits for the relayer’s turn, which the request holds, and finds the claim sent', async () => {
    // Before the instances took turns (relayer-broadcast-turn.ts), the other instance broadcast the
    // claim itself while the request was between its nonce read and its send: both at one nonce.
    const other = await startTestApp({ database: app.database, masterKey, config });
    try {
      const paying = await paymentForGate('/held/reconciler-waits');
      const nonceRead = holdNextRpc('eth_getTransactionCount');
      const answer = app.call('POST', `/v1/gates/${paying.gate.id}/verify`, { body: { payment: paying.payment } });
      let reconciled: Promise<unknown> | undefined;
      try {
        await nonceRead.held;
        await sleep(SETTLEMENT_TIMEOUT_MS + 500);
        reconciled = other.app.get(ReconcilerService).runOnce();
        await sleep(500);
      } finally {
        nonceRead.release();
      }
      await expectPaidOnce(paying, await answer);
      expect(await reconciled).toMatchObject({ resubmitted: 0 });
      expect((await paying.pendingCount()) - paying.sentBefore).toBe(1);
    } finally {
      await other.app.close();
    }
  }, 30_000);
});
