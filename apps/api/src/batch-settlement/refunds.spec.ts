import { BATCH_REASONS, type ChannelConfig } from '@crawlgate/core';
import { randomUUID } from 'node:crypto';
import { keccak256, toHex, type Hex } from 'viem';
import { devTestClient } from '@crawlgate/devchain';
import { batchSettlementSite, type TestSite } from '../../test/fixtures';
import { fundUsdc, newWallet, usdcBalance } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { batchGate, escrowRead, testChannel, type BatchOffer } from '../../test/test-channel';
import { directRefundCalldata } from '../chain/escrow';
import { ChannelStore } from './channel.store';
import { ClaimerService } from './claimer.service';
import { RefundsService } from './refunds.service';

/*
 * x402's cooperative refund (payload type "refund") through POST /v1/gates/{id}/verify, on the real
 * local chain, as an attacker would try it: the receiver is paid for every voucher taken before any
 * money goes back, a refund pays no gate, a voucher never lands on funds a refund returns (the
 * two sent at once), a refund voucher is used once, forged or stale refund vouchers move nothing,
 * and a hold left by a refund whose fate was unknown ends only on the chain's word.
 */
describe('channel refunds', () => {
  let app: TestApp;
  let site: TestSite;
  const payTo = newWallet().address;
  const PRICE = 10_000n; // the site's default 0.01 USD

  beforeAll(async () => {
    app = await startTestApp({ isolateChain: true });
    ({ site } = await batchSettlementSite(app, payTo));
  });
  afterAll(() => app.close());

  const gate = (): Promise<BatchOffer> => batchGate(app, site);
  const verify = (offer: BatchOffer, payment: unknown) =>
    app.call('POST', `/v1/gates/${offer.id}/verify`, { body: { payment } });
  const relayerNonce = () =>
    app.chain.publicClient.getTransactionCount({ address: app.chain.relayer.account.address, blockTag: 'pending' });

  /** A payer whose channel holds `deposit` and has paid `pages` gates. */
  async function paidChannel(deposit: bigint, pages: number) {
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    const first = await gate();
    const channel = testChannel(app, payer, first.accepted);
    expect((await verify(first, await channel.payment(first, PRICE, { deposit }))).status).toBe(200);
    for (let page = 2; page <= pages; page++) {
      const offer = await gate();
      expect((await verify(offer, await channel.payment(offer, BigInt(page) * PRICE))).status).toBe(200);
    }
    /** x402's refund request: the voucher for what was charged, and optionally an amount. */
    const refund = async (offer: BatchOffer, charged: bigint, extra: Record<string, unknown> = {}) => {
      const payment = await channel.payment(offer, charged);
      return { ...payment, payload: { ...payment.payload, type: 'refund', ...extra } };
    };
    return { payer, channel, refund };
  }

  it('claims and settles what was charged, returns the rest to the payer at once, and pays no gate', async () => {
    const { payer, channel, refund } = await paidChannel(50_000n, 2);
    const receiverBefore = await usdcBalance(app, payTo);
    const offer = await gate();
    const response = await verify(offer, await refund(offer, 2n * PRICE));
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.body).toMatchObject({
      status: 'refunded',
      gate_id: offer.id,
      channel_id: channel.channelId,
      payer: payer.address.toLowerCase(),
      refund_amount: '30000',
      channel_state: { balance: '20000', totalClaimed: '20000', refundNonce: '1', chargedCumulativeAmount: '20000' },
    });
    expect(response.body.access_token).toBeUndefined();
    expect(await escrowRead(app, 'channels', channel.channelId)).toEqual([20_000n, 20_000n]);
    expect(await usdcBalance(app, payer.address)).toBe(1_000_000n - 20_000n);
    expect((await usdcBalance(app, payTo)) - receiverBefore).toBe(20_000n);
    expect((await app.call('GET', `/v1/gates/${offer.id}`)).body.status).toBe('open');
    // Nothing is left to spend: the next voucher needs a deposit, and the claimer finds nothing to claim twice.
    const next = await gate();
    const spent = await verify(next, await channel.payment(next, 3n * PRICE));
    expect(spent.body.reason).toBe(BATCH_REASONS.cumulativeExceedsBalance);
    expect((await verify(next, await channel.payment(next, 3n * PRICE, { deposit: 10_000n }))).status).toBe(200);
  });

  it('returns a partial amount, takes vouchers after it, and uses a refund voucher once', async () => {
    const { payer, channel, refund } = await paidChannel(50_000n, 1);
    const offer = await gate();
    const asked = await refund(offer, PRICE, { amount: '5000' });
    const first = await verify(offer, asked);
    expect(first.body).toMatchObject({ status: 'refunded', refund_amount: '5000' });
    expect(first.body.channel_state).toMatchObject({ balance: '45000', totalClaimed: '10000' });
    const again = await verify(offer, asked);
    expect([again.status, again.body.reason]).toEqual([402, BATCH_REASONS.refundPayload]);
    expect(await usdcBalance(app, payer.address)).toBe(1_000_000n - 45_000n);

    const page = await gate();
    expect((await verify(page, await channel.payment(page, 2n * PRICE))).status).toBe(200);
    const later = await verify(offer, await refund(offer, 2n * PRICE));
    expect(later.body).toMatchObject({ status: 'refunded', refund_amount: '25000' });
    expect(await escrowRead(app, 'channels', channel.channelId)).toEqual([20_000n, 20_000n]);
  });

  it('moves nothing for a forged, stale, empty or malformed refund request, and sends no transaction', async () => {
    const { channel, refund } = await paidChannel(30_000n, 2);
    const offer = await gate();
    const nonce = await relayerNonce();
    const asked = await refund(offer, 2n * PRICE);
    const stranger = {
      ...asked,
      payload: { ...asked.payload, voucher: await channel.voucher(2n * PRICE, newWallet()) },
    };
    const cases: [unknown, string][] = [
      [stranger, BATCH_REASONS.voucherSignature],
      [await refund(offer, PRICE), BATCH_REASONS.cumulativeMismatch],
      [await refund(offer, 3n * PRICE), BATCH_REASONS.cumulativeMismatch],
      [await refund(offer, 2n * PRICE, { amount: '0' }), BATCH_REASONS.refundAmountInvalid],
      [await refund(offer, 2n * PRICE, { amount: '-5' }), BATCH_REASONS.refundAmountInvalid],
      [await refund(offer, 2n * PRICE, { amount: 5000 }), BATCH_REASONS.refundAmountInvalid],
    ];
    for (const [payment, reason] of cases) {
      const answer = await verify(offer, payment);
      expect({ status: answer.status, reason: answer.body.reason }).toEqual({ status: 402, reason });
    }
    const mismatch = await verify(offer, await refund(offer, PRICE));
    expect(mismatch.body.channel_state).toMatchObject({ chargedCumulativeAmount: '20000' });
    // A channel of someone else's receiver is not this gate's.
    const other = testChannel(app, newWallet(), offer.accepted, { receiver: newWallet().address });
    const foreign = await other.payment(offer, 0n);
    const answer = await verify(offer, { ...foreign, payload: { ...foreign.payload, type: 'refund' } });
    expect(answer.body.reason).toBe(BATCH_REASONS.receiverMismatch);
    expect(await relayerNonce()).toBe(nonce);

    // All of it refunded: nothing is left, and nothing is sent for a second request.
    expect((await verify(offer, await refund(offer, 2n * PRICE))).body.refund_amount).toBe('10000');
    const afterRefund = await relayerNonce();
    const page = await gate();
    await verify(page, await channel.payment(page, 3n * PRICE, { deposit: 10_000n }));
    const emptyNonce = await relayerNonce();
    const empty = await verify(offer, await refund(offer, 3n * PRICE));
    expect(empty.body.reason).toBe(BATCH_REASONS.refundNoBalance);
    expect(await relayerNonce()).toBe(emptyNonce);
    expect(emptyNonce).toBeGreaterThan(afterRefund); // the deposit went through the relayer
  });

  it('gives the payer’s last voucher to no one who shows only a voucher a claim made public, so no stranger refunds', async () => {
    // A claim's calldata publishes the vouchers it claims: anyone may present one. Had the
    // corrective 402 answered with the payer's last voucher, that voucher would refund the channel.
    const { channel, refund } = await paidChannel(100_000n, 2);
    await app.app.get(ClaimerService).runOnce({ force: true });
    expect(await escrowRead(app, 'channels', channel.channelId)).toEqual([100_000n, 20_000n]);
    const page = await gate();
    expect((await verify(page, await channel.payment(page, 3n * PRICE))).status).toBe(200);

    const nonce = await relayerNonce();
    const offer = await gate();
    for (const stale of [await channel.payment(offer, 2n * PRICE), await refund(offer, 2n * PRICE)]) {
      const answer = await verify(offer, stale);
      expect({ status: answer.status, reason: answer.body.reason }).toEqual({
        status: 402,
        reason: BATCH_REASONS.cumulativeMismatch,
      });
      expect(answer.body.channel_state).toMatchObject({ chargedCumulativeAmount: '30000', totalClaimed: '20000' });
      expect(answer.body.voucher_state).toBeUndefined();
    }
    expect(await relayerNonce()).toBe(nonce);
    expect(await escrowRead(app, 'channels', channel.channelId)).toEqual([100_000n, 20_000n]);

    // The payer, whose answer for its last page was lost, sends that voucher again: it is told its own.
    const resent = await verify(offer, await channel.payment(offer, 3n * PRICE));
    expect(resent.body.voucher_state).toMatchObject({ signedMaxClaimable: '30000' });
  });

  it('asks no refund back with a voucher a claim carried: it is anyone’s; the payer’s next page’s voucher does', async () => {
    // All charged is claimed: the voucher for it is in the claim's calldata. Honoured, a stranger
    // would send the payer's channel back (whole or one unit at a time) whenever it liked.
    const { payer, channel, refund } = await paidChannel(50_000n, 2);
    await app.app.get(ClaimerService).runOnce({ force: true });
    const nonce = await relayerNonce();
    const offer = await gate();
    for (const extra of [{ amount: '1' }, {}]) {
      const answer = await verify(offer, await refund(offer, 2n * PRICE, extra));
      expect({ status: answer.status, reason: answer.body.reason }).toEqual({
        status: 402,
        reason: BATCH_REASONS.refundPayload,
      });
      expect(answer.body.detail).toMatch(/public/);
    }
    expect(await relayerNonce()).toBe(nonce);
    const page = await gate();
    expect((await verify(page, await channel.payment(page, 3n * PRICE))).status).toBe(200);
    const own = await verify(offer, await refund(offer, 3n * PRICE));
    expect(own.body).toMatchObject({ status: 'refunded', refund_amount: '20000' });
    expect(await usdcBalance(app, payer.address)).toBe(1_000_000n - 30_000n);
  });

  it('counts a voucher public from the moment a claim carrying it is sent, mined or not', async () => {
    const { channel } = await paidChannel(100_000n, 2);
    const chain = devTestClient(app.chain.rpcUrl);
    await chain.setAutomine(false);
    let claiming: Promise<unknown> = Promise.resolve();
    try {
      claiming = app.app.get(ClaimerService).runOnce({ force: true });
      // The claim is pending: its calldata shows the voucher for 20,000 to anyone.
      for (let i = 0; i < 200; i++) {
        const pending = await app.chain.publicClient.getTransactionCount({
          address: app.chain.relayer.account.address,
          blockTag: 'pending',
        });
        const latest = await app.chain.publicClient.getTransactionCount({ address: app.chain.relayer.account.address });
        if (pending > latest) break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      const page = await gate();
      expect((await verify(page, await channel.payment(page, 3n * PRICE))).status).toBe(200);
      const offer = await gate();
      const stale = await verify(offer, await channel.payment(offer, 2n * PRICE));
      expect(stale.body.channel_state).toMatchObject({ chargedCumulativeAmount: '30000', totalClaimed: '0' });
      expect(stale.body.voucher_state).toBeUndefined();
    } finally {
      await chain.setAutomine(true);
      await chain.mine({ blocks: 1 });
      await claiming;
    }
  });

  it('never takes a voucher on funds a refund returns: a refund and vouchers sent at once', async () => {
    const claimer = app.app.get(ClaimerService);
    for (let round = 0; round < 4; round++) {
      const { channel, refund } = await paidChannel(60_000n, 1);
      const offers = await Promise.all([gate(), gate(), gate(), gate()]);
      const vouchers = offers.slice(1).map(async (offer) => verify(offer, await channel.payment(offer, 2n * PRICE)));
      const refunded = verify(offers[0], await refund(offers[0], PRICE));
      const answers = await Promise.all([refunded, ...vouchers]);
      const paid = answers.slice(1).filter((answer) => answer.status === 200).length;
      expect(paid).toBeLessThanOrEqual(1);
      // Whatever the order: every voucher taken is within what the channel holds, and gets claimed.
      await claimer.runOnce({ force: true });
      const [balance, claimed] = await escrowRead<readonly [bigint, bigint]>(app, 'channels', channel.channelId);
      expect(claimed).toBe(BigInt(1 + paid) * PRICE);
      expect(balance).toBeGreaterThanOrEqual(claimed);
      if (answers[0].status === 200) expect(balance).toBe(claimed);
      else expect(answers[0].body.reason).toMatch(/cumulative_amount_mismatch|channel_busy/);
    }
  });

  it('claims every other channel of the receiver when one is recorded as charged above what it holds', async () => {
    const over = await paidChannel(20_000n, 1);
    const fine = await paidChannel(20_000n, 2);
    // A record above the balance, with the payer's own voucher for it: one such row used to sink the whole claim.
    const voucher = await over.channel.voucher(30_000n);
    await app.database.sql.query('UPDATE payment_channels SET charged = 30000, signature = $2 WHERE channel_id = $1', [
      over.channel.channelId,
      voucher.signature.toLowerCase(),
    ]);
    await app.app.get(ClaimerService).runOnce({ force: true });
    expect(await escrowRead(app, 'channels', fine.channel.channelId)).toEqual([20_000n, 20_000n]);
    expect(await escrowRead(app, 'channels', over.channel.channelId)).toEqual([20_000n, 20_000n]);
    // Nothing more can be claimed from it: it goes behind the queue, so it crowds out none charged meanwhile.
    const third = await paidChannel(20_000n, 1);
    const batch = app.chain.batchSettlement!;
    const signer = { chainId: app.chain.chainId, escrow: batch.escrow, receiverAuthorizer: batch.authorizer.address };
    const unclaimed = await app.app
      .get(ChannelStore)
      .unclaimed(signer, payTo.toLowerCase(), app.chain.usdc.toLowerCase(), 1);
    expect(unclaimed.map((channel) => channel.channelId)).toEqual([third.channel.channelId]);
  });

  describe('a refund whose transaction’s fate was unknown (the API stopped, the node timed out)', () => {
    const store = () => app.app.get(ChannelStore);

    /**
     * A hold of the channel (charged one page) by a refund of `amount` whose signed transaction is
     * `tx` at relayer nonce `txNonce`.
     */
    async function heldBy(channelId: Hex, tx: Hex, txNonce: number, amount = 20_000n) {
      const hold = randomUUID();
      const nonce = await escrowRead<bigint>(app, 'refundNonce', channelId);
      expect(await store().holdForRefund({ channelId, id: hold, charged: PRICE, nonce, amount })).toBe(true);
      expect(await store().setRefundTx(channelId, hold, null, tx, txNonce)).toBe(true);
    }

    /**
     * A hold by a refund of `amount` whose transaction reverted: a relayer transaction that reverts
     * (the relayer may not refund directly), standing for a refund that ran out of gas.
     */
    async function heldByReverted(channel: { config: ChannelConfig; channelId: Hex }, amount?: bigint) {
      const nonce = await relayerNonce();
      const reverted = await app.chain.relayer.sendTransaction({
        to: app.chain.batchSettlement!.escrow,
        data: directRefundCalldata(channel.config, 1n),
        gas: 200_000n,
        nonce,
      });
      expect((await app.chain.publicClient.waitForTransactionReceipt({ hash: reverted })).status).toBe('reverted');
      await heldBy(channel.channelId, reverted, nonce, amount);
    }

    it('keeps the channel from vouchers while the refund may land, even once it cannot; the payer asking again sends it again', async () => {
      const { channel, refund } = await paidChannel(30_000n, 1);
      // Stored, never broadcast, at the relayer's next nonce: it could still be sent.
      const next = await relayerNonce();
      await heldBy(channel.channelId, keccak256(toHex(`never sent ${next}`)), next);
      const offer = await gate();
      const busy = await verify(offer, await channel.payment(offer, 2n * PRICE));
      expect(busy.body.reason).toBe(BATCH_REASONS.channelBusy);
      // Another relayer transaction uses that nonce: that transaction can never land, but its
      // signature may have been seen, and anyone may send it. Vouchers still wait.
      await paidChannel(20_000n, 1);
      expect(await relayerNonce()).toBeGreaterThan(next);
      expect((await verify(offer, await channel.payment(offer, 2n * PRICE))).body.reason).toBe(
        BATCH_REASONS.channelBusy,
      );
      // The payer asks again: the refund is sent again and lands; vouchers resume on what is left.
      const again = await gate();
      expect((await verify(again, await refund(again, PRICE))).body).toMatchObject({
        status: 'refunded',
        refund_amount: '20000',
      });
      const paid = await verify(offer, await channel.payment(offer, 2n * PRICE, { deposit: 10_000n }));
      expect(paid.status).toBe(200);
    });

    it('keeps the channel from vouchers when the refund’s transaction reverted: its signature is on chain', async () => {
      const { channel, refund } = await paidChannel(30_000n, 1);
      await heldByReverted(channel);
      const offer = await gate();
      expect((await verify(offer, await channel.payment(offer, 2n * PRICE))).body.reason).toBe(
        BATCH_REASONS.channelBusy,
      );
      const again = await gate();
      expect((await verify(again, await refund(again, PRICE))).body).toMatchObject({ status: 'refunded' });
      expect(await escrowRead(app, 'refundNonce', channel.channelId)).toBe(1n);
    });

    it('sends a failed refund again for what it first asked, whatever the request sending it again asks', async () => {
      const { channel, refund } = await paidChannel(30_000n, 1);
      // A refund of 5,000 whose transaction reverted: the payer's voucher for what was charged is in
      // its calldata, so anyone may send the refund request again, asking for 1 unit to use the refund up.
      await heldByReverted(channel, 5_000n);
      const byStranger = await gate();
      expect((await verify(byStranger, await refund(byStranger, PRICE, { amount: '1' }))).body).toMatchObject({
        status: 'refunded',
        refund_amount: '5000',
      });
    });

    it('frees a hold whose refund landed, and counts its voucher total as used', async () => {
      const { channel, refund } = await paidChannel(30_000n, 1);
      const offer = await gate();
      expect((await verify(offer, await refund(offer, PRICE, { amount: '1000' }))).status).toBe(200);
      // The same refund seen as still held (the API stopped before ending it): the chain's nonce moved past it.
      const hold = randomUUID();
      const db = app.database.sql;
      await db.query(
        `UPDATE payment_channels SET refund_id = $2::uuid, refund_nonce = 0, refund_locked_at = now(), refunded_charged = NULL
          WHERE channel_id = $1`,
        [channel.channelId, hold],
      );
      const page = await gate();
      expect((await verify(page, await channel.payment(page, 2n * PRICE))).status).toBe(200);
      const [row] = await db.query<{ refund_id: string | null; refunded_charged: string | bigint }>(
        'SELECT refund_id, refunded_charged FROM payment_channels WHERE channel_id = $1',
        [channel.channelId],
      );
      expect(row.refund_id).toBeNull();
      expect(BigInt(row.refunded_charged)).toBe(PRICE);
    });

    it('ends a stale unsigned hold only if its holder did not store a transaction meanwhile', async () => {
      const { channel } = await paidChannel(30_000n, 1);
      const hold = randomUUID();
      const nonce = await escrowRead<bigint>(app, 'refundNonce', channel.channelId);
      expect(
        await store().holdForRefund({ channelId: channel.channelId, id: hold, charged: PRICE, nonce, amount: PRICE }),
      ).toBe(true);
      await app.database.sql.query(
        `UPDATE payment_channels SET refund_locked_at = now() - interval '10 minutes' WHERE channel_id = $1`,
        [channel.channelId],
      );
      // Another request read it as stale and unsigned; the slow holder stores its transaction before that request ends it.
      expect(
        await store().setRefundTx(channel.channelId, hold, null, keccak256(toHex(hold)), await relayerNonce()),
      ).toBe(true);
      expect(await store().endUnsignedHold(channel.channelId, hold, 120)).toBe(false);
      expect((await store().refundRecord(channel.channelId))?.hold?.id).toBe(hold);
    });

    it('ends in the background the holds that are over, with no payer coming back; keeps one that may still land', async () => {
      const heldRow = async (channelId: Hex) =>
        (
          await app.database.sql.query<{ refund_id: string | null; refunded_charged: string | bigint | null }>(
            'SELECT refund_id, refunded_charged FROM payment_channels WHERE channel_id = $1',
            [channelId],
          )
        )[0];
      // A refund that landed while its request had stopped waiting: the row still shows it held.
      const landed = await paidChannel(30_000n, 1);
      const offer = await gate();
      expect((await verify(offer, await landed.refund(offer, PRICE, { amount: '1000' }))).status).toBe(200);
      await app.database.sql.query(
        `UPDATE payment_channels SET refund_id = $2::uuid, refund_nonce = 0, refund_locked_at = now(), refunded_charged = NULL
          WHERE channel_id = $1`,
        [landed.channel.channelId, randomUUID()],
      );
      // A hold never signed, whose holder is long gone.
      const unsigned = await paidChannel(30_000n, 1);
      const nonce = await escrowRead<bigint>(app, 'refundNonce', unsigned.channel.channelId);
      const hold = randomUUID();
      expect(
        await store().holdForRefund({
          channelId: unsigned.channel.channelId,
          id: hold,
          charged: PRICE,
          nonce,
          amount: PRICE,
        }),
      ).toBe(true);
      await app.database.sql.query(
        `UPDATE payment_channels SET refund_locked_at = now() - interval '10 minutes' WHERE channel_id = $1`,
        [unsigned.channel.channelId],
      );
      // A refund stored at the relayer's next nonce and not seen by the node yet: it may still land.
      const pending = await paidChannel(30_000n, 1);
      const next = await relayerNonce();
      await heldBy(pending.channel.channelId, keccak256(toHex(`not sent yet ${next}`)), next);

      expect(await app.app.get(RefundsService).endHoldsOver()).toBeGreaterThanOrEqual(2);
      expect(await heldRow(landed.channel.channelId)).toMatchObject({ refund_id: null });
      expect(BigInt((await heldRow(landed.channel.channelId)).refunded_charged!)).toBe(PRICE);
      expect((await heldRow(unsigned.channel.channelId)).refund_id).toBeNull();
      expect((await heldRow(pending.channel.channelId)).refund_id).not.toBeNull();
      const page = await gate();
      expect((await verify(page, await pending.channel.payment(page, 2n * PRICE))).body.reason).toBe(
        BATCH_REASONS.channelBusy,
      );
    });

    it('gets past holds that stay held: each run looks at the next ones, so a landed refund is not starved', async () => {
      const lockedAgo = (channelId: Hex, interval: string) =>
        app.database.sql.query(
          `UPDATE payment_channels SET refund_locked_at = now() - $2::interval WHERE channel_id = $1`,
          [channelId, interval],
        );
      // Two refunds that may still land (stored at the relayer's next nonce), held longest of all...
      for (const salt of ['first', 'second']) {
        const { channel } = await paidChannel(30_000n, 1);
        const next = await relayerNonce();
        await heldBy(channel.channelId, keccak256(toHex(`${salt} not sent yet ${next}`)), next);
        await lockedAgo(channel.channelId, salt === 'first' ? '2 days' : '47 hours');
      }
      // ...then one whose refund landed while its request had stopped waiting.
      const landed = await paidChannel(30_000n, 1);
      const offer = await gate();
      expect((await verify(offer, await landed.refund(offer, PRICE, { amount: '1000' }))).status).toBe(200);
      await app.database.sql.query(
        `UPDATE payment_channels SET refund_id = $2::uuid, refund_nonce = 0, refunded_charged = NULL WHERE channel_id = $1`,
        [landed.channel.channelId, randomUUID()],
      );
      await lockedAgo(landed.channel.channelId, '46 hours');
      const held = async () => (await store().refundRecord(landed.channel.channelId))?.hold !== null;

      const refunds = app.app.get(RefundsService);
      await refunds.endHoldsOver(2); // the two that stay held
      expect(await held()).toBe(true);
      await refunds.endHoldsOver(2); // the next two: the landed one among them
      expect(await held()).toBe(false);
    });

    it('keeps a hold whose transaction was never signed, until its holder is surely gone', async () => {
      const { channel } = await paidChannel(30_000n, 1);
      const nonce = await escrowRead<bigint>(app, 'refundNonce', channel.channelId);
      expect(
        await store().holdForRefund({
          channelId: channel.channelId,
          id: randomUUID(),
          charged: PRICE,
          nonce,
          amount: PRICE,
        }),
      ).toBe(true);
      const offer = await gate();
      expect((await verify(offer, await channel.payment(offer, 2n * PRICE))).body.reason).toBe(
        BATCH_REASONS.channelBusy,
      );
      await app.database.sql.query(
        `UPDATE payment_channels SET refund_locked_at = now() - interval '10 minutes' WHERE channel_id = $1`,
        [channel.channelId],
      );
      expect((await verify(offer, await channel.payment(offer, 2n * PRICE))).status).toBe(200);
    });
  });
});
