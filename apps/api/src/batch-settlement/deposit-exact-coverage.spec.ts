import { devTestClient } from '@crawlgate/devchain';
import { batchSettlementSite, openGate, siteAtPrice, type TestSite } from '../../test/fixtures';
import { holdFirst } from '../../test/hold-point';
import { fundUsdc, newWallet, signPayment, usdcBalance } from '../../test/test-agent';
import { startProxiedTestApp, type ProxiedTestApp } from '../../test/proxied-test-app';
import { startTestApp, type TestApp } from '../../test/test-app';
import { batchGate, testChannel } from '../../test/test-channel';
import { depositNonce } from '../chain/escrow';
import { RelayRefusalsStore } from '../payments/relay-refusals.store';

/** The batch site's page price (pricedSite): the voucher paid beside the deposit. */
const PAGE = 10_000n;
/** The deposit: with the exact page below, more than the payer holds; either alone, less. */
const DEPOSIT = 600_000n;
const EXACT_PRICE_USD = '0.5';
const FUNDS_USD = '1';

/**
 * The relayer sends a payer's exact settlements and its batch-settlement deposits: both move the
 * payer's USDC by an EIP-3009 authorization, and each path judged the payer's balance without the
 * other's transaction in flight. A payer holding enough for one of them, paying with both at once
 * (an agent crawling an exact site and a batch site), had both sent: one reverted at the relayer's
 * gas and the payer was refused relaying for 24 hours. Each path now counts the other's in flight.
 */
describe('an exact settlement and a relayed deposit of one payer', () => {
  let proxied: ProxiedTestApp;
  let app: TestApp;
  let exactSite: TestSite;
  let batchSite: TestSite;

  beforeAll(async () => {
    proxied = await startProxiedTestApp();
    app = proxied.app;
    exactSite = await siteAtPrice(app, newWallet(), EXACT_PRICE_USD);
    batchSite = (await batchSettlementSite(app, newWallet().address)).site;
  });
  afterAll(() => proxied.close());

  /**
   * A funded payer (FUNDS_USD unless `fundsUsd`), an exact gate and its payment, a batch gate and its
   * deposit payment; `sameNonce`: the exact authorization signed with the deposit authorization's nonce.
   */
  async function payerOfBoth({ fundsUsd = FUNDS_USD, sameNonce = false } = {}) {
    const payer = newWallet();
    await fundUsdc(app, payer.address, fundsUsd);
    const batchOffer = await batchGate(app, batchSite);
    const channel = testChannel(app, payer, batchOffer.accepted);
    const salt = BigInt(Date.now()) * 1000n + 7n;
    const depositPayment = await channel.payment(batchOffer, PAGE, { deposit: DEPOSIT, salt });
    const exactGate = await openGate(app, exactSite, '/exact/page');
    const exactPayment = await signPayment(
      app,
      payer,
      exactGate,
      sameNonce ? { nonce: depositNonce(channel.channelId, salt) } : {},
    );
    const relayerNonce = () =>
      app.chain.publicClient.getTransactionCount({ address: app.chain.relayer.account.address, blockTag: 'pending' });
    const sentBefore = await relayerNonce();
    return {
      payer,
      payExact: () => app.call('POST', `/v1/gates/${exactGate.id}/verify`, { body: { payment: exactPayment } }),
      deposit: () => app.call('POST', `/v1/gates/${batchOffer.id}/verify`, { body: { payment: depositPayment } }),
      relayerSent: async () => (await relayerNonce()) - sentBefore,
    };
  }

  /** What must hold whichever went first: one sent, nothing reverted, the payer not refused. */
  async function expectOneSent(payer: ReturnType<typeof newWallet>, relayerSent: () => Promise<number>) {
    expect(await relayerSent()).toBe(1);
    expect(await app.app.get(RelayRefusalsStore).isRefused(app.chain.chainId, payer.address)).toBe(false);
  }

  /**
   * `first` sent, its broadcast held at the node; `second` sent meanwhile: whether it was answered
   * while the broadcast was held (a request that waits for the relayer's turn is not), and both answers.
   */
  async function secondWhileFirstOnItsWay(first: () => Promise<Answer>, second: () => Promise<Answer>) {
    const held = holdFirst(proxied.onRpc, (text) => text.includes('eth_sendRawTransaction'));
    const firstAnswer = first();
    await held.reached;
    const secondAnswer = second();
    const answeredWhileHeld = await Promise.race([secondAnswer.then(() => true), later(8_000)]);
    held.open();
    const answers = await Promise.all([firstAnswer, secondAnswer]);
    proxied.onRpc(undefined);
    return { answeredWhileHeld, first: answers[0], second: answers[1] };
  }

  it('refuses the exact payment while the deposit is on its way, the payer holding enough for one', async () => {
    const { payer, payExact, deposit, relayerSent } = await payerOfBoth();
    const { answeredWhileHeld, first, second } = await secondWhileFirstOnItsWay(deposit, payExact);

    expect({ answeredWhileHeld, exact: [second.status, second.body.reason], deposit: first.status }).toEqual({
      answeredWhileHeld: true,
      exact: [402, 'insufficient_funds'],
      deposit: 200,
    });
    await expectOneSent(payer, relayerSent);
    expect(await usdcBalance(app, payer.address)).toBe(1_000_000n - DEPOSIT);
  }, 30_000);

  it('refuses the deposit while the exact settlement is on its way, the payer holding enough for one', async () => {
    const { payer, payExact, deposit, relayerSent } = await payerOfBoth();
    const { answeredWhileHeld, first, second } = await secondWhileFirstOnItsWay(payExact, deposit);

    expect({ answeredWhileHeld, exact: first.status, deposit: [second.status, second.body.reason] }).toEqual({
      answeredWhileHeld: true,
      exact: 200,
      deposit: [402, 'insufficient_funds'],
    });
    await expectOneSent(payer, relayerSent);
    expect(await usdcBalance(app, payer.address)).toBe(500_000n);
  }, 30_000);
  /*
   * Anyone may sign an exact authorization with the nonce of its own deposit authorization (the
   * deposit's nonce is public: the channel and a salt). Each path took the other as itself and left
   * it out, both were sent, one reverted at our gas, and nobody was refused (its nonce was used).
   */
  it('refuses an exact payment spending the nonce of the payer’s deposit on its way', async () => {
    const { payer, payExact, deposit, relayerSent } = await payerOfBoth({ fundsUsd: '2', sameNonce: true });
    const { answeredWhileHeld, first, second } = await secondWhileFirstOnItsWay(deposit, payExact);

    expect({ answeredWhileHeld, exact: [second.status, second.body.reason], deposit: first.status }).toEqual({
      answeredWhileHeld: true,
      exact: [402, 'invalid_exact_evm_nonce_already_used'],
      deposit: 200,
    });
    await expectOneSent(payer, relayerSent);
  }, 30_000);

  it('refuses a deposit spending the nonce of the payer’s exact settlement on its way', async () => {
    const { payer, payExact, deposit, relayerSent } = await payerOfBoth({ fundsUsd: '2', sameNonce: true });
    const { answeredWhileHeld, first, second } = await secondWhileFirstOnItsWay(payExact, deposit);

    expect({ answeredWhileHeld, exact: first.status, deposit: [second.status, second.body.reason] }).toEqual({
      answeredWhileHeld: true,
      exact: 200,
      deposit: [402, 'invalid_batch_settlement_evm_deposit_payload'],
    });
    await expectOneSent(payer, relayerSent);
  }, 30_000);
  it('sends no deposit whose request stalled past the time its lease counts it', async () => {
    const { payer, deposit, relayerSent } = await payerOfBoth();
    // The transaction's preparation (gas, fees), after the lease is taken and the coverage judged, before the broadcast.
    const held = holdFirst(
      proxied.onRpc,
      (text) => text.includes('eth_fillTransaction') || text.includes('eth_estimateGas'),
    );
    const depositing = deposit();
    await held.reached;
    // Stalled past the 9 minutes a lease may be written down within (exact claims count it 10): nothing may be sent.
    await app.database.sql.query(
      `UPDATE deposit_leases SET taken_at = now() - interval '11 minutes' WHERE payer = $1`,
      [payer.address.toLowerCase()],
    );
    held.open();
    const answer = await depositing;
    proxied.onRpc(undefined);
    const rows = await app.database.sql.query('SELECT id FROM channel_deposits WHERE payer = $1', [
      payer.address.toLowerCase(),
    ]);

    expect({ status: answer.status, detail: answer.body.detail, sent: await relayerSent(), rows }).toEqual({
      status: 503,
      detail: expect.stringMatching(/not sent/),
      sent: 0,
      rows: [],
    });
  }, 30_000);

  it('keeps no record of a deposit whose broadcast never reached the node, so it holds none of the payer’s balance', async () => {
    const { payer, payExact, deposit, relayerSent } = await payerOfBoth();
    // Written down (its lease renewed, its row inserted) and then broadcast: the RPC refuses new
    // connections while its row's insert is held, so the broadcast provably never reaches the node.
    const held = holdFirst(proxied.onStatement, (sql) => sql.includes('INSERT INTO channel_deposits'));
    const depositing = deposit();
    await held.reached;
    await proxied.rpc.refuse();
    held.open();
    const answer = await depositing;
    proxied.onStatement(undefined);
    await proxied.rpc.restore();
    const rows = await app.database.sql.query('SELECT id FROM channel_deposits WHERE payer = $1', [
      payer.address.toLowerCase(),
    ]);

    expect({ status: answer.status, detail: answer.body.detail, rows, sent: await relayerSent() }).toEqual({
      status: 503,
      detail: expect.stringMatching(/unreachable/),
      rows: [],
      sent: 0,
    });
    // The exact payment its balance covers without the deposit is not held back by it.
    expect((await payExact()).status).toBe(200);
  }, 30_000);
});

type Answer = Awaited<ReturnType<TestApp['call']>>;

/** False after `ms`: an answer that waits for the held broadcast never comes while it is held. */
const later = (ms: number) => new Promise<false>((resolve) => setTimeout(() => resolve(false), ms));

/*
 * A deposit whose request stopped waiting for it (503, its lease kept) is sent again when the payer
 * sends the same payment. Once its lease was stale, the resend took it over and, the first copy not
 * mined yet, broadcast a second: one of the two reverted at our gas, and nobody was refused (the
 * authorization was used, by our own first copy).
 */
describe('a deposit sent again while its first copy is on its way', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ isolateChain: true, config: { chain: { settlementTimeoutMs: 1_500 } } });
  });
  afterAll(async () => {
    await devTestClient(app.chain.rpcUrl).setAutomine(true);
    await app.close();
  });

  it('is not broadcast again, and pays once the first copy lands', async () => {
    const { site } = await batchSettlementSite(app, newWallet().address);
    const payer = newWallet();
    await fundUsdc(app, payer.address, FUNDS_USD);
    const offer = await batchGate(app, site);
    const payment = await testChannel(app, payer, offer.accepted).payment(offer, PAGE, { deposit: DEPOSIT });
    const verify = () => app.call('POST', `/v1/gates/${offer.id}/verify`, { body: { payment } });
    const relayerNonce = () =>
      app.chain.publicClient.getTransactionCount({ address: app.chain.relayer.account.address, blockTag: 'pending' });
    const sentBefore = await relayerNonce();
    const chain = devTestClient(app.chain.rpcUrl);

    await chain.setAutomine(false);
    const first = await verify();
    expect([first.status, first.body.detail]).toEqual([503, expect.stringMatching(/sent and not confirmed/)]);
    // Its lease stale (the deposit's lease is taken over after 120 s), the payer sends the payment again.
    await app.database.sql.query(`UPDATE deposit_leases SET taken_at = now() - interval '3 minutes' WHERE payer = $1`, [
      payer.address.toLowerCase(),
    ]);
    // Refused before it is written down a second time (DepositOnItsWay: its first copy is at another
    // relayer nonce), or, on anvil, already by its preparation against the pending block: never sent.
    const again = await verify();
    expect({ status: again.status, sent: (await relayerNonce()) - sentBefore }).toEqual({ status: 503, sent: 1 });

    await chain.mine({ blocks: 1 });
    await chain.setAutomine(true);
    const paid = await verify();
    expect(paid.status).toBe(200);
    expect((await relayerNonce()) - sentBefore).toBe(1);
    expect(await usdcBalance(app, payer.address)).toBe(1_000_000n - DEPOSIT);
  }, 30_000);
});
