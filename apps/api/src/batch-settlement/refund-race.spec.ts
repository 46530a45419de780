import { BATCH_REASONS, BATCH_SETTLEMENT_ABI } from '@crawlgate/core';
import { decodeFunctionData, type Hex } from 'viem';
import { batchSettlementSite, type TestSite } from '../../test/fixtures';
import { startProxiedTestApp, type ProxiedTestApp, type Tap } from '../../test/proxied-test-app';
import { fundUsdc, newWallet } from '../../test/test-agent';
import type { TestApp } from '../../test/test-app';
import { batchOffer, escrowRead, testChannel, type BatchOffer } from '../../test/test-channel';

// The voucher's write must arrive late at a server, so this file runs on PostgreSQL even on a PGlite run.
/** Longest a held write or broadcast waits to be released. */
const HOLD_MS = 15_000;

/** Holds the first chunk `matches` picks until release() (or HOLD_MS); `held` resolves once it is held. */
function holdFirst(matches: (text: string) => boolean): { tap: Tap; held: Promise<void>; release(): void } {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let markHeld!: () => void;
  const held = new Promise<void>((resolve) => (markHeld = resolve));
  let taken = false;
  const tap: Tap = (text) => {
    if (taken || !matches(text)) return;
    taken = true;
    markHeld();
    setTimeout(release, HOLD_MS);
    return released;
  };
  return { tap, held, release };
}

const isVoucherWrite = (sql: string) => sql.includes('moved AS (');
const isBroadcast = (rpc: string) => rpc.includes('eth_sendRawTransaction');

/**
 * A voucher judged against the channel's balance before a cooperative refund, whose write reaches
 * the database only once that refund holds the channel, or after it landed: the refund returns the
 * funds the voucher was judged against, so it must not be taken (it could never be claimed). Its
 * write is held at the database, and the refund's broadcast at the chain's RPC, to force the order.
 */
describe('a voucher written while a refund it did not see is in flight, or after it landed', () => {
  let proxied: ProxiedTestApp;
  let app: TestApp;
  let site: TestSite;
  const PRICE = 10_000n;

  beforeAll(async () => {
    proxied = await startProxiedTestApp();
    app = proxied.app;
    ({ site } = await batchSettlementSite(app, newWallet().address));
  });
  afterAll(() => proxied.close());

  const gate = async (path: string): Promise<BatchOffer> =>
    batchOffer(
      await app.call('POST', '/v1/gates', { body: { url: path }, headers: { 'x-site-token': site.siteToken } }),
    );
  const verify = (offer: BatchOffer, payment: unknown) =>
    app.call('POST', `/v1/gates/${offer.id}/verify`, { body: { payment } });

  /** A payer's channel holding 30,000 and charged one page. */
  async function chargedChannel(name: string) {
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    const first = await gate(`/race/${name}/first`);
    const channel = testChannel(app, payer, first.accepted);
    expect((await verify(first, await channel.payment(first, PRICE, { deposit: 30_000n }))).status).toBe(200);
    return channel;
  }

  const refundOf = async (channel: ReturnType<typeof testChannel>, offer: BatchOffer) => {
    const asked = await channel.payment(offer, PRICE);
    return { ...asked, payload: { ...asked.payload, type: 'refund' } };
  };

  /** The chain's (balance, totalClaimed) and the API's charged total: all one page. */
  async function expectChargedOnePage(channel: ReturnType<typeof testChannel>) {
    const [balance, claimed] = await escrowRead<readonly [bigint, bigint]>(app, 'channels', channel.channelId);
    expect([balance, claimed]).toEqual([PRICE, PRICE]);
    const [row] = await app.database.sql.query<{ charged: string | bigint }>(
      'SELECT charged FROM payment_channels WHERE channel_id = $1',
      [channel.channelId],
    );
    expect(BigInt(row.charged)).toBe(PRICE);
  }

  it('refuses as busy a voucher written while the refund’s transaction is on its way', async () => {
    const channel = await chargedChannel('in-flight');
    const write = holdFirst(isVoucherWrite);
    proxied.onStatement(write.tap);
    const second = await gate('/race/in-flight/second');
    const voucher = verify(second, await channel.payment(second, 2n * PRICE));
    await write.held;

    const broadcast = holdFirst(isBroadcast);
    proxied.onRpc(broadcast.tap);
    const refundGate = await gate('/race/in-flight/refund');
    const refund = verify(refundGate, await refundOf(channel, refundGate));
    await broadcast.held;
    write.release();
    const late = await voucher;
    broadcast.release();
    expect([late.status, late.body.reason]).toEqual([402, BATCH_REASONS.channelBusy]);
    expect((await refund).body).toMatchObject({ status: 'refunded', refund_amount: '20000' });
    await expectChargedOnePage(channel);
  }, 30_000);

  it('refuses as busy a voucher written after the refund landed; the channel stays charged within what it holds', async () => {
    const channel = await chargedChannel('landed');
    const write = holdFirst(isVoucherWrite);
    proxied.onStatement(write.tap);
    const second = await gate('/race/landed/second');
    const voucher = verify(second, await channel.payment(second, 2n * PRICE));
    await write.held;

    const refundGate = await gate('/race/landed/refund');
    const refund = await verify(refundGate, await refundOf(channel, refundGate));
    write.release();
    expect(refund.body).toMatchObject({ status: 'refunded', refund_amount: '20000' });
    const late = await voucher;
    expect([late.status, late.body.reason]).toEqual([402, BATCH_REASONS.channelBusy]);
    await expectChargedOnePage(channel);
  }, 30_000);

  it('shows the node no refund signature before the transaction that carries it', async () => {
    const channel = await chargedChannel('unseen');
    const requests: string[] = [];
    proxied.onRpc((text) => void requests.push(text));
    const refundGate = await gate('/race/unseen/refund');
    const refund = await verify(refundGate, await refundOf(channel, refundGate));
    proxied.onRpc(undefined);
    expect(refund.body).toMatchObject({ status: 'refunded' });
    const sent = await app.chain.publicClient.getTransaction({ hash: refund.body.refund_tx_hash });
    const calls = decodeFunctionData({ abi: BATCH_SETTLEMENT_ABI, data: sent.input }).args[0] as readonly Hex[];
    const signed = decodeFunctionData({ abi: BATCH_SETTLEMENT_ABI, data: calls.at(-1)! });
    expect(signed.functionName).toBe('refundWithSignature');
    const signature = (signed.args[3] as Hex).slice(2).toLowerCase();
    const broadcast = requests.findIndex((text) => text.includes('eth_sendRawTransaction'));
    expect(broadcast).toBeGreaterThan(0);
    expect(requests.slice(0, broadcast).filter((text) => text.toLowerCase().includes(signature))).toEqual([]);
  }, 30_000);
});
