import { randomUUID } from 'node:crypto';
import {
  BATCH_REASONS,
  parseBatchSettlementPayment,
  peekAccessTokenPayload,
  readGate,
  signGate,
  verifyAccessToken,
} from '@crawlgate/core';
import {
  batchSettlementAbi,
  devTestClient,
  simulationAwareWalletAbi,
  simulationAwareWalletBytecode,
} from '@crawlgate/devchain';
import { Logger } from '@nestjs/common';
import { batchSettlementSite, type TestPayee, type TestPublisher, type TestSite } from '../../test/fixtures';
import { fundEth, fundUsdc, newWallet, usdcBalance, walletOf } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { getAddress, zeroAddress, type Hex } from 'viem';
import { batchOffer, escrowRead, malleate, testChannel, type BatchOffer } from '../../test/test-channel';
import { pausedAt } from '../../test/pause-at';
import { depositCalldata, depositNonce } from '../chain/escrow';
import { RelayRefusalsStore } from '../payments/relay-refusals.store';
import { ChannelStore } from './channel.store';
import { AccessTokenService } from '../access-tokens/access-token.service';
import { PricingService } from '../pricing/pricing.service';
import { SETTLEMENT_GAS } from '../chain/chain-health';
import { ClaimerService, RELAYER_GAS_READ_MS } from './claimer.service';
import { SignerKeys } from '../chain/signer-keys';
import { SiteSecretsService } from '../sites/site-secrets.service';

/*
 * Paying gates with x402 batch-settlement vouchers, through POST /v1/gates/{id}/verify on the real
 * local chain, as an attacker would try it: vouchers bound to other channels, receivers, tokens and
 * delays, the wrong signer, a high-s twin, replays, totals below or above what the channel was
 * charged or holds, and fifty vouchers at once on one channel.
 */
describe('voucher payments', () => {
  let app: TestApp;
  let site: TestSite;
  let publisher: TestPublisher;
  // Its key signs each publisher's proof: several publishers here name this one address.
  const payee = newWallet();
  const PRICE = 10_000n; // the site's default 0.01 USD

  beforeAll(async () => {
    app = await startTestApp({ isolateChain: true });
    ({ site, publisher } = await batchSettlementSite(app, payee));
  });
  afterAll(() => app.close());

  const gate = async (path = `/article/${Math.random().toString(36).slice(2)}`): Promise<BatchOffer> =>
    batchOffer(
      await app.call('POST', '/v1/gates', { body: { url: path }, headers: { 'x-site-token': site.siteToken } }),
    );
  const verify = (offer: BatchOffer, payment: unknown) =>
    app.call('POST', `/v1/gates/${offer.id}/verify`, { body: { payment } });
  /** A site of its own paying `siteTo`, and a funded payer's channel to it, opened by paying `firstPath` with a deposit of 100,000. */
  async function channelOnOwnSite(siteTo: TestPayee, firstPath: string) {
    const own = await batchSettlementSite(app, siteTo);
    const gateOf = async (path: string) =>
      batchOffer(
        await app.call('POST', '/v1/gates', { body: { url: path }, headers: { 'x-site-token': own.site.siteToken } }),
      );
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    const first = await gateOf(firstPath);
    const channel = testChannel(app, payer, first.accepted);
    expect((await verify(first, await channel.payment(first, PRICE, { deposit: 100_000n }))).status).toBe(200);
    return { own, gateOf, channel };
  }
  /** A channel's second page, a path of its own, paid with its voucher for 2 × PRICE. */
  async function secondPagePaid() {
    const { channel } = await openChannel(50_000n);
    const path = `/article/${randomUUID()}`;
    const offer = await gate(path);
    const payment = await channel.payment(offer, 2n * PRICE);
    const paid = await verify(offer, payment);
    expect(paid.status).toBe(200);
    return { channel, path, offer, payment, paid };
  }
  /** The site's payout address claims `voucher` on the escrow itself, as x402's escrow lets a receiver: the chain then shows it. */
  async function claimedByReceiver(
    channel: ReturnType<typeof testChannel>,
    voucher: { maxClaimableAmount: string; signature: string },
  ) {
    await fundEth(app, payee.address);
    const total = BigInt(voucher.maxClaimableAmount);
    const hash = await walletOf(app, payee).writeContract({
      address: app.chain.batchSettlement!.escrow,
      abi: batchSettlementAbi,
      functionName: 'claim',
      args: [
        [
          {
            voucher: { channel: channel.config, maxClaimableAmount: total },
            signature: voucher.signature as Hex,
            totalClaimed: total,
          },
        ],
      ],
    });
    expect((await app.chain.publicClient.waitForTransactionReceipt({ hash })).status).toBe('success');
  }
  const channelOnChain = (channelId: `0x${string}`) =>
    escrowRead<readonly [bigint, bigint]>(app, 'channels', channelId);
  /** What this API has charged the channel in all, as its row holds it. */
  const chargedOf = async (channelId: string) =>
    (await app.database.prisma.paymentChannel.findUnique({ where: { channelId } }))!.charged;

  /** For each offer, the payer's first page on a channel of its own (salts from `firstSalt` on), with a deposit of 50,000. */
  const firstPagesOnNewChannels = (payer: ReturnType<typeof newWallet>, offers: BatchOffer[], firstSalt: number) =>
    Promise.all(
      offers.map((one, i) =>
        testChannel(app, payer, one.accepted, { salt: `0x${(firstSalt + i).toString(16).padStart(64, '0')}` }).payment(
          one,
          PRICE,
          { deposit: 50_000n },
        ),
      ),
    );

  async function openChannel(deposit: bigint) {
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    const offer = await gate();
    const channel = testChannel(app, payer, offer.accepted);
    const response = await verify(offer, await channel.payment(offer, PRICE, { deposit }));
    expect(response.status).toBe(200);
    return { payer, channel, first: response };
  }

  it('takes a deposit with its first voucher: the deposit lands in the escrow, the gate is paid at once with a token', async () => {
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    const offer = await gate('/article/first');
    const channel = testChannel(app, payer, offer.accepted);
    const response = await verify(offer, await channel.payment(offer, PRICE, { deposit: 50_000n }));
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.body).toMatchObject({
      status: 'paid',
      url: '/article/first',
      amount: '10000',
      payer: payer.address.toLowerCase(),
    });
    expect(response.body.access_token).toEqual(expect.any(String));
    expect(response.body.batch_settlement).toMatchObject({
      channel_id: channel.channelId,
      charged_amount: '10000',
      deposit_amount: '50000',
      channel_state: {
        channelId: channel.channelId,
        balance: '50000',
        totalClaimed: '0',
        chargedCumulativeAmount: '10000',
        withdrawRequestedAt: 0,
      },
    });
    expect(response.body.tx_hash).toBe(response.body.batch_settlement.deposit_tx_hash);
    expect(await channelOnChain(channel.channelId)).toEqual([50_000n, 0n]);
    expect(await usdcBalance(app, payer.address)).toBe(1_000_000n - 50_000n);
    // The token opens the gate's path.
    const check = await app.call('POST', '/v1/access-tokens/verify', {
      body: { token: response.body.access_token, url: '/article/first' },
      headers: { 'x-site-token': site.siteToken },
    });
    expect(check.body).toMatchObject({ valid: true });
  });

  it('takes no voucher at an old price for a gate offered before the price went up: 409, the channel charged nothing', async () => {
    const { own, gateOf, channel } = await channelOnOwnSite(payee, '/rising/first');
    const before = await gateOf('/rising/next');
    // Gates state whole seconds: the change comes in a later second than the offers.
    await new Promise((resolve) => setTimeout(resolve, 1005 - (Date.now() % 1000)));
    const raised = await app.call('PUT', `/v1/sites/${own.site.siteId}/pricing`, {
      body: { default_price_usd: '0.02' },
      headers: own.publisher.auth,
    });
    expect(raised.status).toBe(200);
    const old = await verify(before, await channel.payment(before, PRICE + PRICE));
    expect(old.status).toBe(409);
    expect(old.body.detail).toMatch(/price .* went up/);
    // Nothing was charged: the next page at today's price follows the first one's total.
    const fresh = await gateOf('/rising/next');
    const paid = await verify(fresh, await channel.payment(fresh, PRICE + 20_000n));
    expect(paid.status).toBe(200);
    expect(paid.body.batch_settlement).toMatchObject({
      charged_amount: '20000',
      channel_state: { chargedCumulativeAmount: String(PRICE + 20_000n) },
    });
  });

  it('takes no voucher for a gate paying a payout address its publisher has since replaced: 409, the channel charged nothing', async () => {
    const { own, gateOf, channel } = await channelOnOwnSite(newWallet().address, '/moved/first');
    const before = await gateOf('/moved/next');
    const moved = await app.call('PATCH', '/v1/publishers/me', {
      body: { payout_address: newWallet().address },
      headers: { ...own.publisher.auth, 'x-confirm-password': own.publisher.password },
    });
    expect(moved.status).toBe(200);
    const old = await verify(before, await channel.payment(before, PRICE + PRICE));
    expect(old.status).toBe(409);
    expect(old.body.detail).toMatch(/payout address/);
    expect((await channelOnChain(channel.channelId))[0]).toBe(100_000n);
  });

  /** `payment` sent for `offer`, `meanwhile` run while its deposit waits in the mempool, then mined: the answer. */
  async function verifiedWhileDepositPends(offer: BatchOffer, payment: unknown, meanwhile: () => Promise<void>) {
    const chain = devTestClient(app.chain.rpcUrl);
    const relayer = app.chain.relayer.account.address;
    const pendingCount = () => app.chain.publicClient.getTransactionCount({ address: relayer, blockTag: 'pending' });
    const sentBefore = await pendingCount();
    await chain.setAutomine(false);
    try {
      const answer = verify(offer, payment);
      for (const started = Date.now(); (await pendingCount()) === sentBefore;) {
        if (Date.now() - started > 10_000) throw new Error('the relayer never broadcast the deposit');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await meanwhile();
      await chain.mine({ blocks: 1 });
      return await answer;
    } finally {
      await chain.setAutomine(true);
    }
  }

  it('takes no voucher at the old price when the price went up while its deposit was landing: 409, the deposit stays in the channel', async () => {
    const own = await batchSettlementSite(app, payee);
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    const offer = batchOffer(
      await app.call('POST', '/v1/gates', {
        body: { url: '/rising/slow' },
        headers: { 'x-site-token': own.site.siteToken },
      }),
    );
    const channel = testChannel(app, payer, offer.accepted);
    const payment = await channel.payment(offer, PRICE, { deposit: 50_000n });
    // Gates state whole seconds: the change comes in a later second than the offer.
    await new Promise((resolve) => setTimeout(resolve, 1005 - (Date.now() % 1000)));
    // The deposit waits in the mempool; the price goes up meanwhile.
    const old = await verifiedWhileDepositPends(offer, payment, async () => {
      const raised = await app.call('PUT', `/v1/sites/${own.site.siteId}/pricing`, {
        body: { default_price_usd: '0.02' },
        headers: own.publisher.auth,
      });
      expect(raised.status).toBe(200);
    });
    expect(old.status).toBe(409);
    expect(old.body.detail).toMatch(/price .* went up/);
    // The deposit landed and nothing was charged: the channel holds it for a page at today's price.
    const [balance] = await channelOnChain(channel.channelId);
    expect(balance).toBe(50_000n);
    const fresh = batchOffer(
      await app.call('POST', '/v1/gates', {
        body: { url: '/rising/slow' },
        headers: { 'x-site-token': own.site.siteToken },
      }),
    );
    const paid = await verify(fresh, await channel.payment(fresh, 20_000n));
    expect(paid.status).toBe(200);
    expect(paid.body.batch_settlement).toMatchObject({ charged_amount: '20000' });
  });

  it('takes no voucher when the site turned vouchers off while its deposit was landing, as its resend meanwhile was told: the deposit stays in the channel', async () => {
    const own = await batchSettlementSite(app, payee);
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    const offer = batchOffer(
      await app.call('POST', '/v1/gates', {
        body: { url: '/switched/off' },
        headers: { 'x-site-token': own.site.siteToken },
      }),
    );
    const channel = testChannel(app, payer, offer.accepted);
    const payment = await channel.payment(offer, PRICE, { deposit: 50_000n });
    // The deposit waits in the mempool; the publisher turns vouchers off, and the payer, its answer
    // lost (a proxy's timeout), sends the voucher again: not taken, so it is told to pay with exact.
    const first = await verifiedWhileDepositPends(offer, payment, async () => {
      const off = await app.call('PATCH', `/v1/sites/${own.site.siteId}`, {
        body: { batch_settlement: false },
        headers: own.publisher.auth,
      });
      expect(off.status).toBe(200);
      const resent = await verify(offer, payment);
      expect([resent.status, resent.body.reason]).toEqual([402, BATCH_REASONS.scheme]);
    });
    expect([first.status, first.body.reason, first.body.access_token]).toEqual([402, BATCH_REASONS.scheme, undefined]);
    expect(await app.database.prisma.paymentChannel.findUnique({ where: { channelId: channel.channelId } })).toBeNull();
    expect((await channelOnChain(channel.channelId))[0]).toBe(50_000n);
  });

  /**
   * A voucher sent twice at once: its first copy has read the channel's record (nothing taken yet)
   * and waits before its last check of the terms while its twin (a front's retry) is charged, then
   * the publisher makes `change`. Both answers, and what the channel was charged.
   */
  async function twinThen(
    path: string,
    change: (own: Awaited<ReturnType<typeof batchSettlementSite>>) => Promise<{ status: number }>,
  ) {
    const { own, gateOf, channel } = await channelOnOwnSite(payee, `${path}-before`);
    const offer = await gateOf(path);
    const payment = await channel.payment(offer, 2n * PRICE);
    let twin!: Awaited<ReturnType<typeof verify>>;
    const first = await pausedAt(
      app.app.get(PricingService),
      'assertOfferStands',
      async () => {
        twin = await verify(offer, payment);
        expect((await change(own)).status).toBeLessThan(300);
      },
      () => verify(offer, payment),
    );
    const charged = await chargedOf(channel.channelId);
    return { twin, first, charged };
  }

  it('answers a voucher as taken when its twin, sent at once, was charged and vouchers turned off before its own last check', async () => {
    const { twin, first, charged } = await twinThen('/article/twin', (own) =>
      app.call('PATCH', `/v1/sites/${own.site.siteId}`, {
        body: { batch_settlement: false },
        headers: own.publisher.auth,
      }),
    );
    expect([twin.status, first.status, first.body.access_token]).toEqual([200, 200, twin.body.access_token]);
    expect(charged).toBe(2n * PRICE);
  });

  it('answers 410 for a voucher its twin was charged for when the site was deleted before its own last check', async () => {
    const { twin, first, charged } = await twinThen('/article/gone', (own) =>
      app.call('DELETE', `/v1/sites/${own.site.siteId}`, { headers: own.publisher.auth }),
    );
    // Paid, and told so: the payment stands, but no token can be signed without the site's secret.
    expect([twin.status, first.status, first.body.detail]).toEqual([
      200,
      410,
      expect.stringMatching(/site was deleted/),
    ]);
    expect(charged).toBe(2n * PRICE);
  });

  it("reads a voucher's channel record once, beside the gate's lookup; a gate id whose MAC does not check out (another site's secret, the same terms) gets 404 whatever was read for it, nothing charged", async () => {
    const { channel } = await openChannel(50_000n);
    const offer = await gate();
    const payment = await channel.payment(offer, 2n * PRICE);
    const forgedId = signGate(readGate(offer.id)!, 'a'.repeat(43));
    const records = jest.spyOn(app.app.get(ChannelStore), 'voucherRecord');
    try {
      const forged = await app.call('POST', `/v1/gates/${forgedId}/verify`, {
        body: {
          payment: {
            ...payment,
            accepted: { ...payment.accepted, extra: { ...payment.accepted.extra, gate_id: forgedId } },
          },
        },
      });
      expect([forged.status, forged.body.access_token]).toEqual([404, undefined]);
      records.mockClear();
      const paid = await verify(offer, payment);
      expect(paid.status).toBe(200);
      expect(records).toHaveBeenCalledTimes(1);
    } finally {
      records.mockRestore();
    }
    expect(await chargedOf(channel.channelId)).toBe(2n * PRICE);
  });

  it("does no voucher work ahead for a gate id the lookup refuses without any (another chain's, expired): 404, no record read, no signature checked", async () => {
    const { channel } = await openChannel(50_000n);
    const offer = await gate();
    const payment = await channel.payment(offer, 2n * PRICE);
    const terms = readGate(offer.id)!;
    const records = jest.spyOn(app.app.get(ChannelStore), 'voucherRecord');
    const signatures = jest.spyOn(app.app.get(SignerKeys), 'signedBy');
    try {
      for (const forged of [
        signGate({ ...terms, chainId: 999_999 }, 'a'.repeat(43)),
        signGate({ ...terms, exp: Math.floor(Date.now() / 1000) - 60 }, site.secret),
      ]) {
        const answer = await app.call('POST', `/v1/gates/${forged}/verify`, { body: { payment } });
        await new Promise((resolve) => setTimeout(resolve, 50)); // work started ahead would run by now
        expect([answer.status, records.mock.calls.length, signatures.mock.calls.length]).toEqual([404, 0, 0]);
      }
    } finally {
      records.mockRestore();
      signatures.mockRestore();
    }
  });

  it('answers a recorded_only resend whose twin took the voucher while its gate was looked up with the twin\'s token, never "not recorded"', async () => {
    const { channel } = await openChannel(50_000n);
    const offer = await gate();
    const payment = await channel.payment(offer, 2n * PRICE);
    let twin: Awaited<ReturnType<typeof verify>> | undefined;
    const resent = await pausedAt(
      app.app.get(SiteSecretsService),
      'usable',
      async () => {
        twin = await verify(offer, payment);
      },
      () => app.call('POST', `/v1/gates/${offer.id}/verify`, { body: { payment, recorded_only: true } }),
    );
    expect(twin!.status).toBe(200);
    expect([resent.status, resent.body.access_token]).toEqual([200, twin!.body.access_token]);
  });

  it('answers 404, not 500, for a voucher whose site was deleted after its last check of the terms, before its token was signed: nothing charged', async () => {
    const { own, gateOf, channel } = await channelOnOwnSite(payee, '/article/deleted-before');
    const offer = await gateOf('/article/deleted');
    const payment = await channel.payment(offer, 2n * PRICE);
    const answer = await pausedAt(
      app.app.get(AccessTokenService),
      'issue',
      async () => {
        const deleted = await app.call('DELETE', `/v1/sites/${own.site.siteId}`, { headers: own.publisher.auth });
        expect(deleted.status).toBeLessThan(300);
      },
      () => verify(offer, payment),
    );
    expect([answer.status, answer.body.detail]).toEqual([404, 'Gate not found or expired']);
    expect(await chargedOf(channel.channelId)).toBe(PRICE);
  });

  it('takes no voucher whose terms changed after their last check, as its resend meanwhile was told: vouchers turned off, the price raised', async () => {
    const { own, gateOf, channel } = await channelOnOwnSite(payee, '/article/terms-before');
    const changes = [
      {
        path: '/article/terms-off',
        change: { method: 'PATCH', url: '', body: { batch_settlement: false }, undo: { batch_settlement: true } },
      },
      {
        path: '/article/terms-price',
        change: {
          method: 'PUT',
          url: '/pricing',
          body: { default_price_usd: '0.02', rules: [] },
          undo: { default_price_usd: '0.01', rules: [] },
        },
      },
    ] as const;
    const terms = (change: (typeof changes)[number]['change'], body: object) =>
      app.call(change.method, `/v1/sites/${own.site.siteId}${change.url}`, { body, headers: own.publisher.auth });
    for (const { path, change } of changes) {
      const offer = await gateOf(path);
      const payment = await channel.payment(offer, 2n * PRICE);
      // A price change judges gates offered before its second.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      let resent!: Awaited<ReturnType<typeof verify>>;
      // The first copy passed its last check and is being recorded; the publisher changes the
      // terms, and the payer's resend (its answer lost) is told the voucher was not taken.
      const first = await pausedAt(
        app.app.get(AccessTokenService),
        'issue',
        async () => {
          expect((await terms(change, change.body)).status).toBe(200);
          resent = await verify(offer, payment);
        },
        () => verify(offer, payment),
      );
      expect(resent.status).not.toBe(200);
      expect([first.status, first.body.reason, first.body.access_token]).toEqual([
        resent.status,
        resent.body.reason,
        undefined,
      ]);
      expect(await chargedOf(channel.channelId)).toBe(PRICE);
      expect((await terms(change, change.undo)).status).toBe(200);
    }
  });

  /**
   * A new site whose first secret a rotation gave `graceSeconds` more, and a gate for `path` signed
   * with that first secret, as a middleware still holding only it mints.
   */
  async function gateOfRetiringSecret(graceSeconds: number, path: string) {
    const own = await batchSettlementSite(app, payee);
    const rotated = await app.call('POST', `/v1/sites/${own.site.siteId}/secret/rotate`, {
      body: { grace_seconds: graceSeconds },
      headers: own.publisher.auth,
    });
    expect(rotated.status).toBe(200);
    const minted = batchOffer(
      await app.call('POST', '/v1/gates', { body: { url: path }, headers: { 'x-site-token': own.site.siteToken } }),
    );
    const id = signGate(readGate(minted.id)!, own.site.secret);
    const offer = { id, accepted: { ...minted.accepted, extra: { ...minted.accepted.extra, gate_id: id } } };
    return { own, offer };
  }

  it('signs a voucher-paid token with the secret that signed its gate while it verifies', async () => {
    const { own, offer } = await gateOfRetiringSecret(600, '/old-secret');
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    const paid = await verify(
      offer,
      await testChannel(app, payer, offer.accepted).payment(offer, PRICE, { deposit: 50_000n }),
    );
    expect(paid.status).toBe(200);
    expect(peekAccessTokenPayload(paid.body.access_token)?.kid).toBe(own.site.kid);
    expect(
      verifyAccessToken(paid.body.access_token, {
        secret: own.site.secret,
        siteId: own.site.siteId,
        url: '/old-secret',
      }).valid,
    ).toBe(true);
  });

  type OwnSite = Awaited<ReturnType<typeof batchSettlementSite>>;
  /**
   * A channel's second page, `path` on a site of its own, its voucher sent while `during` changes that
   * site just before the voucher is recorded; the channel's charged total after.
   */
  async function changedBeforeRecord(path: string, during: (own: OwnSite) => Promise<void>) {
    const { own, gateOf, channel } = await channelOnOwnSite(payee, `${path}/first`);
    const offer = await gateOf(path);
    const payment = await channel.payment(offer, 2n * PRICE);
    const answer = await pausedAt(
      app.app.get(ChannelStore),
      'recordVoucher',
      () => during(own),
      () => verify(offer, payment),
    );
    const charged = await chargedOf(channel.channelId);
    return { own, gateOf, channel, offer, payment, answer, charged };
  }
  /** Rotates the site's access-token secret, the one it replaces verifying `graceSeconds` more; the new kid. */
  async function rotateSecret(own: OwnSite, graceSeconds: number): Promise<string> {
    const rotated = await app.call('POST', `/v1/sites/${own.site.siteId}/secret/rotate`, {
      body: { grace_seconds: graceSeconds },
      headers: own.publisher.auth,
    });
    expect(rotated.status).toBe(200);
    return rotated.body.kid;
  }

  it('signs no token with a secret revoked while its voucher was judged: a rotation without grace just before the voucher is recorded, and the token the answer carries verifies with the new secret', async () => {
    let newKid = '';
    const path = '/revoked';
    const { own, offer, payment, answer, charged } = await changedBeforeRecord(path, async (own) => {
      newKid = await rotateSecret(own, 0);
    });
    expect(answer.status).toBe(200);
    expect(peekAccessTokenPayload(answer.body.access_token)?.kid).toBe(newKid);
    const check = await app.call('POST', '/v1/access-tokens/verify', {
      body: { token: answer.body.access_token, url: path },
      headers: { 'x-site-token': own.site.siteToken },
    });
    expect([check.status, check.body.valid]).toEqual([200, true]);
    // Charged once, and the same voucher sent again gets the same token.
    expect(charged).toBe(2n * PRICE);
    expect((await verify(offer, payment)).body.access_token).toBe(answer.body.access_token);
  });

  it('takes no voucher for a gate whose secret a rotation, while the voucher was judged, gave less than a settlement to live: 409, nothing charged, not a token dead in seconds', async () => {
    const path = '/retired-meanwhile';
    const { gateOf, channel, answer, charged } = await changedBeforeRecord(path, async (own) => {
      await rotateSecret(own, 5);
    });
    expect([answer.status, answer.body.detail, answer.body.access_token]).toEqual([
      409,
      expect.stringMatching(/secret .* retired/),
      undefined,
    ]);
    expect(charged).toBe(PRICE);
    // The page is paid through a gate of the new secret, with the same total.
    const fresh = await gateOf(path);
    const paid = await verify(fresh, await channel.payment(fresh, 2n * PRICE));
    expect(paid.status).toBe(200);
    expect(new Date(paid.body.expires_at).getTime() - Date.now()).toBeGreaterThan(60_000);
  });

  it('takes no voucher, and sends no deposit, for a gate whose secret retires before the payment could settle', async () => {
    const { offer } = await gateOfRetiringSecret(30, '/retiring');
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    const channel = testChannel(app, payer, offer.accepted);
    const refused = await verify(offer, await channel.payment(offer, PRICE, { deposit: 50_000n }));
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/secret .* retired/);
    expect(await channelOnChain(channel.channelId)).toEqual([0n, 0n]);
    expect(await usdcBalance(app, payer.address)).toBe(1_000_000n);
  });

  it('counts a voucher payment as revenue when accepted, and lists it as batch-settlement with its channel', async () => {
    const stats = async () =>
      (await app.call('GET', `/v1/sites/${site.siteId}/stats`, { headers: publisher.auth })).body;
    const before = await stats();
    const { channel, first } = await openChannel(50_000n);
    const after = await stats();
    expect(BigInt(after.revenue_amount) - BigInt(before.revenue_amount)).toBe(PRICE);
    expect(after.paid_gates - before.paid_gates).toBe(1);
    const listed = (await app.call('GET', `/v1/sites/${site.siteId}/payments?limit=1`, { headers: publisher.auth }))
      .body.items[0];
    expect(listed).toMatchObject({
      url: first.body.url,
      amount: '10000',
      scheme: 'batch-settlement',
      channel_id: channel.channelId,
      tx_hash: null,
    });
  });

  it('takes the next voucher alone; the same voucher again answers its gate the same, and pays no other gate', async () => {
    const { channel } = await openChannel(50_000n);
    const offer = await gate();
    const payment = await channel.payment(offer, 2n * PRICE);
    const first = await verify(offer, payment);
    expect(first.status).toBe(200);
    expect(first.body.tx_hash).toBe('');
    const again = await verify(offer, payment);
    expect(again.status).toBe(200);
    expect(again.body.access_token).toBe(first.body.access_token);

    const other = await gate();
    const replay = await verify(other, { ...payment, accepted: other.accepted });
    expect(replay.status).toBe(402);
    expect(replay.body.reason).toBe(BATCH_REASONS.cumulativeMismatch);
    expect((await app.call('GET', `/v1/gates/${other.id}`)).body.status).toBe('open');
  });

  it('answers a voucher taken for its page again through another gate of that page (sent again without naming its gate, which the middleware pays with a gate minted for it): the same token, nothing charged; not on another page or site', async () => {
    const { channel, path, payment, paid } = await secondPagePaid();

    const samePage = await gate(path);
    for (const body of [
      { payment: { ...payment, accepted: samePage.accepted } },
      { payment: { ...payment, accepted: samePage.accepted }, recorded_only: true },
    ]) {
      const again = await app.call('POST', `/v1/gates/${samePage.id}/verify`, { body });
      expect([again.status, again.body.access_token, again.body.gate_id, again.body.url]).toEqual([
        200,
        paid.body.access_token,
        samePage.id,
        path,
      ]);
    }
    // A copy signed by another key tells nothing of what was taken.
    const forged = await verify(
      samePage,
      await channel.payment(samePage, 2n * PRICE, { voucher: await channel.voucher(2n * PRICE, newWallet()) }),
    );
    expect([forged.status, forged.body.access_token]).toEqual([402, undefined]);
    // Another page of the site, and the same page of another site paid to the same address: the channel's correction.
    const otherPage = await gate(`${path}-2`);
    const otherSite = await batchSettlementSite(app, payee);
    const otherSitesPage = batchOffer(
      await app.call('POST', '/v1/gates', {
        body: { url: path },
        headers: { 'x-site-token': otherSite.site.siteToken },
      }),
    );
    for (const other of [otherPage, otherSitesPage]) {
      const refused = await verify(other, { ...payment, accepted: other.accepted });
      expect([refused.status, refused.body.reason, refused.body.access_token]).toEqual([
        402,
        BATCH_REASONS.cumulativeMismatch,
        undefined,
      ]);
    }
    expect(await chargedOf(channel.channelId)).toBe(2n * PRICE);

    // Once the token it bought has expired (its row aged by hand), what it bought is over: another gate of its page gets the correction.
    await app.database.prisma.payment.updateMany({
      where: { channelId: channel.channelId, cumulativeAmount: 2n * PRICE },
      data: { tokenExpiresAt: new Date(Date.now() - 1_000) },
    });
    const later = await gate(path);
    const expired = await verify(later, { ...payment, accepted: later.accepted });
    expect([expired.status, expired.body.reason, expired.body.access_token]).toEqual([
      402,
      BATCH_REASONS.cumulativeMismatch,
      undefined,
    ]);
  });

  it('answers a voucher through another gate of its page only while no one but its payer and site can hold it: once public (the chain shows it claimed), such a gate gets the correction', async () => {
    // A claim's calldata shows its voucher to anyone; sent through a gate of a guessed path, it
    // would open the page it paid to whoever guessed. Its own gate (its id only the payer was shown) still answers.
    const { channel, path, offer, payment, paid } = await secondPagePaid();
    await claimedByReceiver(channel, await channel.voucher(2n * PRICE));

    const samePage = await gate(path);
    const replayed = await verify(samePage, { ...payment, accepted: samePage.accepted });
    expect([replayed.status, replayed.body.reason, replayed.body.access_token]).toEqual([
      402,
      BATCH_REASONS.cumulativeMismatch,
      undefined,
    ]);
    const own = await verify(offer, payment);
    expect([own.status, own.body.access_token]).toEqual([200, paid.body.access_token]);
  });

  it('with recorded_only, answers for a voucher it took for the gate and takes none (the gate offered before its price rose, its answer lost)', async () => {
    const { channel } = await openChannel(50_000n);
    const offer = await gate();
    const payment = await channel.payment(offer, 2n * PRICE);
    const verifyRecorded = () =>
      app.call('POST', `/v1/gates/${offer.id}/verify`, { body: { payment, recorded_only: true } });
    const unrecorded = await verifyRecorded();
    expect([unrecorded.status, unrecorded.body.reason]).toEqual([402, 'invalid_payload']);
    expect((await app.call('GET', `/v1/gates/${offer.id}`)).body.status).toBe('open');

    // Nothing was charged: the same total is still the channel's next.
    const paid = await verify(offer, payment);
    expect(paid.status).toBe(200);
    const again = await verifyRecorded();
    expect([again.status, again.body.access_token]).toEqual([200, paid.body.access_token]);

    // The channel's next voucher, for another gate, is not taken with recorded_only; without it, it is.
    const next = await gate();
    const nextPayment = await channel.payment(next, 3n * PRICE);
    const refused = await app.call('POST', `/v1/gates/${next.id}/verify`, {
      body: { payment: nextPayment, recorded_only: true },
    });
    expect([refused.status, refused.body.reason]).toEqual([402, 'invalid_payload']);
    expect((await verify(next, nextPayment)).status).toBe(200);
  });

  it('with recorded_only, starts no refund', async () => {
    const { channel } = await openChannel(50_000n);
    const offer = await gate();
    const asked = await channel.payment(offer, PRICE);
    const refund = { ...asked, payload: { ...asked.payload, type: 'refund' } };
    const before = await channelOnChain(channel.channelId);
    const answer = await app.call('POST', `/v1/gates/${offer.id}/verify`, {
      body: { payment: refund, recorded_only: true },
    });
    expect([answer.status, answer.body.reason]).toEqual([402, 'invalid_payload']);
    expect(await channelOnChain(channel.channelId)).toEqual(before);
    expect((await verify(offer, refund)).body.status).toBe('refunded');
  });

  it('refuses a signed total beyond what any channel holds (above the database’s 64-bit range) with a 402, not a 500', async () => {
    const { channel } = await openChannel(50_000n);
    for (const total of [2n ** 63n, 2n ** 128n - 1n]) {
      const offer = await gate();
      const response = await verify(offer, await channel.payment(offer, total));
      expect({ status: response.status, reason: response.body.reason }).toEqual({
        status: 402,
        reason: BATCH_REASONS.cumulativeExceedsBalance,
      });
    }
  });

  it('gives an accepted voucher’s token to no copy of it with another signature: a stranger’s, or its own high-s twin', async () => {
    const { channel } = await openChannel(50_000n);
    const offer = await gate();
    const voucher = await channel.voucher(2n * PRICE);
    const paid = await verify(offer, await channel.payment(offer, 2n * PRICE, { voucher }));
    expect(paid.status).toBe(200);
    const forged = [
      { ...(await channel.voucher(2n * PRICE, newWallet())) },
      { ...voucher, signature: malleate(voucher.signature) },
    ];
    for (const copy of forged) {
      const response = await verify(offer, await channel.payment(offer, 2n * PRICE, { voucher: copy }));
      expect({ status: response.status, reason: response.body.reason, token: response.body.access_token }).toEqual({
        status: 402,
        reason: BATCH_REASONS.voucherSignature,
        token: undefined,
      });
    }
  });

  it('checks a payer’s later vouchers against its admitted key as strictly as its first: a stranger’s, a high-s twin, a flipped v, another total’s signature or a moved r are refused, and the claim collects what it took', async () => {
    const { payer, channel } = await openChannel(50_000n);
    // Its first voucher, taken with the deposit, admits its key: the next ones are checked against it.
    for (const paid of [2n * PRICE, 3n * PRICE]) {
      const offer = await gate();
      expect((await verify(offer, await channel.payment(offer, paid))).status).toBe(200);
    }
    const total = 4n * PRICE;
    const voucher = await channel.voucher(total);
    const signature = voucher.signature;
    const flippedV = `${signature.slice(0, 130)}${signature.endsWith('1b') ? '1c' : '1b'}` as Hex;
    const r = BigInt(signature.slice(0, 66));
    const movedR = `0x${(r + 1n).toString(16).padStart(64, '0')}${signature.slice(66)}` as Hex;
    const forged = [
      (await channel.voucher(total, newWallet())).signature,
      malleate(signature),
      flippedV,
      (await channel.voucher(5n * PRICE)).signature,
      movedR,
    ];
    for (const copy of forged) {
      const offer = await gate();
      const response = await verify(
        offer,
        await channel.payment(offer, total, { voucher: { ...voucher, signature: copy } }),
      );
      expect({ status: response.status, reason: response.body.reason, token: response.body.access_token }).toEqual({
        status: 402,
        reason: BATCH_REASONS.voucherSignature,
        token: undefined,
      });
    }
    const offer = await gate();
    expect((await verify(offer, await channel.payment(offer, total, { voucher }))).status).toBe(200);
    expect(app.app.get(SignerKeys).knows(payer.address)).toBe(true);
    // What the key's check took, the escrow's ecrecover takes: the claim collects it all.
    await app.app.get(ClaimerService).runOnce({ force: true });
    expect((await channelOnChain(channel.channelId))[1]).toBe(total);
  });

  it('reads nothing from the chain for a voucher its channel’s payer did not sign', async () => {
    const { channel } = await openChannel(50_000n);
    const offer = await gate();
    const forged = await channel.payment(offer, 2n * PRICE, {
      voucher: await channel.voucher(2n * PRICE, newWallet()),
    });
    const reads = jest.spyOn(app.chain.publicClient, 'readContract');
    try {
      const response = await verify(offer, forged);
      expect({ status: response.status, reason: response.body.reason }).toEqual({
        status: 402,
        reason: BATCH_REASONS.voucherSignature,
      });
      expect(reads).not.toHaveBeenCalled();
    } finally {
      reads.mockRestore();
    }
  });

  it('answers a total below, equal to or above charged + price with x402’s corrective 402 holding the payer’s own last voucher', async () => {
    const { channel } = await openChannel(50_000n);
    const last = await channel.voucher(PRICE);
    for (const total of [PRICE - 1n, PRICE, PRICE + 1n, 3n * PRICE]) {
      const offer = await gate();
      const response = await verify(offer, await channel.payment(offer, total));
      expect(response.status).toBe(402);
      expect(response.body.reason).toBe(BATCH_REASONS.cumulativeMismatch);
      expect(response.body.channel_state).toMatchObject({
        channelId: channel.channelId,
        chargedCumulativeAmount: '10000',
        balance: '50000',
      });
      expect(response.body.voucher_state).toEqual({ signedMaxClaimable: '10000', signature: last.signature });
    }
    expect(await chargedOf(channel.channelId)).toBe(PRICE);
  });

  it('goes on from the chain’s total, with a warning, when the receiver claimed a voucher it refused (x402’s escrow lets the receiver claim)', async () => {
    // The site sees every voucher its payers send, refused ones too, and its payout address may claim
    // them on the escrow itself. What it takes so is the payer's signed money, and never counted here.
    const { channel } = await openChannel(100_000n);
    const refused = await channel.voucher(5n * PRICE);
    const ahead = await gate();
    expect((await verify(ahead, await channel.payment(ahead, 5n * PRICE, { voucher: refused }))).status).toBe(402);
    await claimedByReceiver(channel, refused);

    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      const stale = await gate();
      const corrected = await verify(stale, await channel.payment(stale, 2n * PRICE));
      expect(corrected.status).toBe(402);
      expect(corrected.body.channel_state).toMatchObject({ chargedCumulativeAmount: String(5n * PRICE) });
      const next = await gate();
      expect((await verify(next, await channel.payment(next, 6n * PRICE))).status).toBe(200);
      expect(warn).toHaveBeenCalledWith(expect.stringContaining(`channel ${channel.channelId}`));
      expect(warn.mock.calls.filter(([message]) => String(message).includes(channel.channelId))).toHaveLength(1);
    } finally {
      warn.mockRestore();
    }
    // Only the pages the API took count as paid: the first and the last.
    const payments = await app.database.prisma.payment.findMany({ where: { channelId: channel.channelId } });
    expect(payments.map((payment) => payment.amount).sort()).toEqual([PRICE, PRICE]);
  });

  it('refuses vouchers bound to another receiver, authorizer, token, delay or channel, signed by another key, or a high-s twin', async () => {
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    const offer = await gate();
    const good = testChannel(app, payer, offer.accepted);
    const stranger = newWallet();
    const cases: [string, Promise<unknown>][] = [
      [
        BATCH_REASONS.receiverMismatch,
        testChannel(app, payer, offer.accepted, { receiver: stranger.address }).payment(offer, PRICE, {
          deposit: 50_000n,
        }),
      ],
      [
        BATCH_REASONS.receiverAuthorizerMismatch,
        testChannel(app, payer, offer.accepted, { receiverAuthorizer: stranger.address }).payment(offer, PRICE, {
          deposit: 50_000n,
        }),
      ],
      [
        BATCH_REASONS.tokenMismatch,
        testChannel(app, payer, offer.accepted, { token: stranger.address }).payment(offer, PRICE, {
          deposit: 50_000n,
        }),
      ],
      [
        BATCH_REASONS.withdrawDelayMismatch,
        testChannel(app, payer, offer.accepted, { withdrawDelay: 900 }).payment(offer, PRICE, { deposit: 50_000n }),
      ],
      [
        BATCH_REASONS.voucherSignature,
        good.payment(offer, PRICE, { deposit: 50_000n, voucher: await good.voucher(PRICE, stranger) }),
      ],

      [
        BATCH_REASONS.channelIdMismatch,
        good.payment(offer, PRICE, {
          deposit: 50_000n,
          voucher: await good.voucher(
            PRICE,
            payer,
            testChannel(app, payer, offer.accepted, { salt: `0x${'11'.repeat(32)}` }).channelId,
          ),
        }),
      ],
      [
        BATCH_REASONS.voucherSignature,
        (async () => {
          const v = await good.voucher(PRICE);
          return good.payment(offer, PRICE, { deposit: 50_000n, voucher: { ...v, signature: malleate(v.signature) } });
        })(),
      ],
    ];
    for (const [reason, payment] of cases) {
      const response = await verify(offer, await payment);
      expect({ reason, status: response.status }).toEqual({ reason: response.body.reason, status: 402 });
    }
    // No payerAuthorizer (x402: the payer signs, maybe as a contract wallet, which the escrow would
    // ask again at claim time): refused for that, even with the payer's own valid signature.
    const payerSigns = testChannel(app, payer, offer.accepted, { payerAuthorizer: zeroAddress });
    const refused = await verify(offer, await payerSigns.payment(offer, PRICE, { deposit: 50_000n }));
    expect([refused.status, refused.body.reason, refused.body.detail]).toEqual([
      402,
      BATCH_REASONS.voucherSignature,
      expect.stringContaining('needs a payerAuthorizer'),
    ]);
    // Nothing was deposited or recorded by any of them; the honest payment still works.
    expect(await usdcBalance(app, payer.address)).toBe(1_000_000n);
    expect((await verify(offer, await good.payment(offer, PRICE, { deposit: 50_000n }))).status).toBe(200);
  });

  it('refuses a channel whose payer is the gate’s pay-to: vouchers to itself pay the publisher nothing', async () => {
    // Whoever holds the payout key (a wallet replaced since, lost with its key) would read for gas alone.
    await fundUsdc(app, payee.address, '1');
    const before = await usdcBalance(app, payee.address);
    const offer = await gate();
    const own = testChannel(app, payee, offer.accepted);
    const response = await verify(offer, await own.payment(offer, PRICE, { deposit: 50_000n }));
    expect([response.status, response.body.reason, response.body.detail]).toEqual([
      402,
      BATCH_REASONS.receiverMismatch,
      expect.stringContaining('itself'),
    ]);
    expect(response.body.access_token).toBeUndefined();
    expect(await usdcBalance(app, payee.address)).toBe(before);
    expect(await app.database.prisma.paymentChannel.findUnique({ where: { channelId: own.channelId } })).toBeNull();
  });

  it('refuses a channel address in neither lower case nor its EIP-55 checksum with a 402, not a 500', async () => {
    // Every letter's case flipped: still 40 hex digits, no longer its checksum.
    const flipped = (address: string) =>
      `0x${[...address.slice(2)].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('')}`;
    const upper = (address: string) => `0x${address.slice(2).toUpperCase()}`;
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    const offer = await gate();
    const channel = testChannel(app, payer, offer.accepted);
    for (const [field, respell] of ['payer', 'payerAuthorizer', 'receiver', 'receiverAuthorizer', 'token'].flatMap(
      (name) => [[name, flipped] as const, [name, upper] as const],
    )) {
      const payment = await channel.payment(offer, PRICE, { deposit: 50_000n });
      const config = payment.payload.channelConfig as Record<string, string>;
      // Only a spelling that is neither: a random address whose checksum has every letter upper case
      // is spelled right in upper case, and pays (a payer's did, in a red CI run).
      const respelled = respell(config[field]);
      if ([getAddress(config[field]), config[field].toLowerCase()].includes(respelled)) continue;
      config[field] = respelled;
      const response = await verify(offer, payment);
      expect({ field, status: response.status, reason: response.body.reason }).toEqual({
        field,
        status: 402,
        reason: BATCH_REASONS.voucherPayload,
      });
    }
    expect(await usdcBalance(app, payer.address)).toBe(1_000_000n);
  });

  it('refuses a total above what the channel holds, and a voucher with no deposit behind it', async () => {
    const { channel } = await openChannel(2n * PRICE);
    const second = await gate();
    expect((await verify(second, await channel.payment(second, 2n * PRICE))).status).toBe(200);
    const third = await gate();
    const over = await verify(third, await channel.payment(third, 3n * PRICE));
    expect(over.status).toBe(402);
    expect(over.body.reason).toBe(BATCH_REASONS.cumulativeExceedsBalance);

    const empty = testChannel(app, newWallet(), third.accepted);
    const none = await verify(third, await empty.payment(third, PRICE));
    expect(none.status).toBe(402);
    expect(none.body.reason).toBe(BATCH_REASONS.channelNotFound);
  });

  it('sends no deposit for a voucher it will refuse, nor a deposit smaller than the page: the relayer pays no gas for them', async () => {
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    const offer = await gate();
    const { channel: funded } = await openChannel(5n * PRICE);
    const relayerNonce = () =>
      app.chain.publicClient.getTransactionCount({ address: app.chain.relayer.account.address, blockTag: 'pending' });
    const before = await relayerNonce();
    // Each with a fresh deposit authorization (a new salt), as an attacker would send them.
    for (let i = 0; i < 3; i++) {
      const channel = testChannel(app, payer, offer.accepted);
      const tooSmall = await verify(offer, await channel.payment(offer, PRICE, { deposit: 1n }));
      expect(tooSmall.status).toBe(402);
      expect(tooSmall.body.reason).toBe(BATCH_REASONS.cumulativeExceedsBalance);
    }
    // A deposit smaller than the page, on a channel that already holds enough: a gas bill per page.
    const next = await gate();
    const dust = await verify(next, await funded.payment(next, 2n * PRICE, { deposit: PRICE - 1n }));
    expect(dust.status).toBe(402);
    expect(dust.body.reason).toBe(BATCH_REASONS.depositPayload);
    expect(await relayerNonce()).toBe(before);
    expect(await usdcBalance(app, payer.address)).toBe(1_000_000n);
    // A deposit of exactly the page's price pays it.
    expect(
      (await verify(offer, await testChannel(app, payer, offer.accepted).payment(offer, PRICE, { deposit: PRICE })))
        .status,
    ).toBe(200);
  });

  it('sends no deposit of a contract payer, whose signature check may pass the simulation and fail on chain at the relayer’s cost', async () => {
    // A wallet that signs anything in a simulation (gas priced at 0) and nothing on chain, its
    // channel's vouchers signed by an EOA: the deposit passed every check and reverted, its gas ours.
    const deployer = newWallet();
    const client = devTestClient(app.chain.rpcUrl);
    await client.setBalance({ address: deployer.address, value: 10n ** 18n });
    const hash = await walletOf(app, deployer).deployContract({
      abi: simulationAwareWalletAbi,
      bytecode: simulationAwareWalletBytecode,
    } as never);
    const wallet = (await app.chain.publicClient.waitForTransactionReceipt({ hash })).contractAddress!;
    await fundUsdc(app, wallet, '1');
    const relayerNonce = () =>
      app.chain.publicClient.getTransactionCount({ address: app.chain.relayer.account.address, blockTag: 'pending' });
    const before = await relayerNonce();
    for (let i = 0; i < 3; i++) {
      const offer = await gate();
      const channel = testChannel(app, newWallet(), offer.accepted, { payer: wallet });
      const refused = await verify(offer, await channel.payment(offer, PRICE, { deposit: 50_000n }));
      expect([refused.status, refused.body.reason]).toEqual([402, BATCH_REASONS.depositPayload]);
      expect(refused.body.detail).toMatch(/deposits into its channel itself/);
    }
    expect(await relayerNonce()).toBe(before);
    expect(await usdcBalance(app, wallet)).toBe(1_000_000n);
  });

  it('sends no deposit of a payer whose relayed transaction reverted lately: it deposits itself', async () => {
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    await app.app.get(RelayRefusalsStore).refuse(app.chain.chainId, payer.address, `0x${'12'.repeat(32)}`);
    const relayerNonce = () =>
      app.chain.publicClient.getTransactionCount({ address: app.chain.relayer.account.address, blockTag: 'pending' });
    const before = await relayerNonce();
    const offer = await gate();
    const refused = await verify(
      offer,
      await testChannel(app, payer, offer.accepted).payment(offer, PRICE, { deposit: 50_000n }),
    );
    expect([refused.status, refused.body.reason]).toEqual([402, 'payer_not_relayed']);
    expect(await relayerNonce()).toBe(before);
  });

  it('sends one deposit of a payer at a time: deposits sent at once never leave the relayer paying for reverts', async () => {
    const relayer = app.chain.relayer.account.address;
    const relayerNonce = () => app.chain.publicClient.getTransactionCount({ address: relayer, blockTag: 'pending' });
    /** Transactions the relayer sent since `from` (its nonce), and how many of them reverted. */
    async function relayerSince(fromBlock: bigint) {
      const head = await app.chain.publicClient.getBlockNumber({ cacheTime: 0 });
      let sent = 0;
      let reverted = 0;
      for (let n = fromBlock + 1n; n <= head; n++) {
        const block = await app.chain.publicClient.getBlock({ blockNumber: n, includeTransactions: true });
        for (const tx of block.transactions) {
          if (tx.from.toLowerCase() !== relayer.toLowerCase()) continue;
          sent++;
          const receipt = await app.chain.publicClient.getTransactionReceipt({ hash: tx.hash });
          if (receipt.status !== 'success') reverted++;
        }
      }
      return { sent, reverted };
    }

    // The same deposit and voucher, five times at once, to one gate.
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    const offer = await gate();
    const channel = testChannel(app, payer, offer.accepted);
    const same = await channel.payment(offer, PRICE, { deposit: 50_000n });
    const startBlock = await app.chain.publicClient.getBlockNumber({ cacheTime: 0 });
    const answers = await Promise.all(Array.from({ length: 5 }, () => verify(offer, same)));
    expect(answers.filter((answer) => answer.status === 200).length).toBeGreaterThanOrEqual(1);
    expect(answers.every((answer) => answer.status === 200 || answer.status === 402 || answer.status === 503)).toBe(
      true,
    );
    expect(await relayerSince(startBlock)).toEqual({ sent: 1, reverted: 0 });

    // Five gates at once, each with a deposit of its own (new salts, new channels), funds for one.
    const poor = newWallet();
    await fundUsdc(app, poor.address, '0.05');
    const offers = await Promise.all(Array.from({ length: 5 }, () => gate()));
    const payments = await firstPagesOnNewChannels(poor, offers, 1);
    const before = await app.chain.publicClient.getBlockNumber({ cacheTime: 0 });
    const nonceBefore = await relayerNonce();
    const poorAnswers = await Promise.all(offers.map((one, i) => verify(one, payments[i])));
    expect(poorAnswers.filter((answer) => answer.status === 200)).toHaveLength(1);
    expect(await relayerSince(before)).toEqual({ sent: 1, reverted: 0 });
    expect(await relayerNonce()).toBe(nonceBefore + 1);
  });

  it('hands a payer’s deposit lease to one holder at a time, and to another only once it is stale or given back', async () => {
    const store = app.app.get(ChannelStore);
    const payer = newWallet().address;
    const [first, second] = [randomUUID(), randomUUID()];
    const NONCE = `0x${'ab'.repeat(32)}`;
    expect(await takeLease(app, payer, first, NONCE)).toBe(true);
    expect(await takeLease(app, payer.toLowerCase(), second, NONCE)).toBe(false);
    await store.endDepositLease(payer, second); // not its holder: nothing given back
    expect(await takeLease(app, payer, second, NONCE)).toBe(false);
    await app.database.sql.query(`UPDATE deposit_leases SET taken_at = now() - interval '3 minutes' WHERE payer = $1`, [
      payer.toLowerCase(),
    ]);
    expect(await takeLease(app, payer, second, NONCE)).toBe(true);
    await store.endDepositLease(payer, second);
    expect(await takeLease(app, payer, first, NONCE)).toBe(true);
    await store.endDepositLeaseOf(payer, `0x${'cd'.repeat(32)}`); // another deposit's: nothing given back
    expect(await takeLease(app, payer, second, NONCE)).toBe(false);
    await store.endDepositLeaseOf(payer, NONCE.toUpperCase().replace('0X', '0x')); // its deposit landed
    expect(await takeLease(app, payer, second, NONCE)).toBe(true);
  });

  it('lets no one hold a payer’s deposits up with deposits it did not sign; the payer’s own sent at once all land', async () => {
    const victim = newWallet();
    await fundUsdc(app, victim.address, '1');
    const attacker = newWallet();
    const offer = await gate();
    // A channel naming the victim as payer, with the attacker as authorizer and the attacker's deposit signature.
    const forged = testChannel(app, attacker, offer.accepted, {
      payer: victim.address,
      payerAuthorizer: attacker.address,
    });
    const refused = await verify(offer, await forged.payment(offer, PRICE, { deposit: 50_000n }));
    expect(refused.body.reason).toBe(BATCH_REASONS.depositSimulationFailed);
    const [lease] = await app.database.sql.query('SELECT payer FROM deposit_leases WHERE payer = $1', [
      victim.address.toLowerCase(),
    ]);
    expect(lease).toBeUndefined();
    // The victim opens two channels at once (two gates, funds for both): the second waits for the first.
    const offers = [await gate(), await gate()];
    const payments = await firstPagesOnNewChannels(victim, offers, 7);
    const answers = await Promise.all(offers.map((one, i) => verify(one, payments[i])));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
  });

  it('gives back a lease kept for a deposit that landed when its payment is sent again', async () => {
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    const offer = await gate();
    const channel = testChannel(app, payer, offer.accepted);
    const payment = await channel.payment(offer, PRICE, { deposit: 50_000n });
    // As if the request had stopped waiting for its deposit's receipt: the deposit landed, its voucher
    // was not recorded, and the lease was kept for the deposit's nonce.
    const parsed = parseBatchSettlementPayment(payment);
    if (!parsed.ok || !parsed.payment.deposit) throw new Error('not a deposit payment');
    const { erc3009 } = parsed.payment.deposit;
    const batch = app.chain.batchSettlement!;
    const landed = await app.chain.relayer.sendTransaction({
      to: batch.escrow,
      data: depositCalldata(batch, parsed.payment.channelConfig, 50_000n, erc3009),
    });
    expect((await app.chain.publicClient.waitForTransactionReceipt({ hash: landed })).status).toBe('success');
    const nonce = depositNonce(channel.channelId, erc3009.salt);
    expect(await takeLease(app, payer.address, randomUUID(), nonce)).toBe(true);
    expect((await verify(offer, payment)).status).toBe(200);
    const leases = await app.database.sql.query('SELECT payer FROM deposit_leases WHERE payer = $1', [
      payer.address.toLowerCase(),
    ]);
    expect(leases).toEqual([]);
  });

  it('never lets fifty concurrent vouchers on one channel spend more than it holds, nor pay a gate twice', async () => {
    const { channel } = await openChannel(10n * PRICE); // room for nine more pages
    const offers = await Promise.all(Array.from({ length: 50 }, () => gate()));
    // Fifty distinct totals, as a payer racing itself would sign them, all at once.
    const payments = await Promise.all(offers.map((offer, i) => channel.payment(offer, BigInt(i + 2) * PRICE)));
    const answers = await Promise.all(offers.map((offer, i) => verify(offer, payments[i])));
    const paid = answers.filter((a) => a.status === 200);
    expect(answers.every((a) => [200, 402, 409].includes(a.status))).toBe(true);
    const row = await app.database.prisma.paymentChannel.findUnique({ where: { channelId: channel.channelId } });
    const rows = await app.database.prisma.payment.findMany({ where: { channelId: channel.channelId } });
    expect(row!.charged).toBeLessThanOrEqual(10n * PRICE);
    expect(BigInt(rows.length) * PRICE).toBe(row!.charged);
    expect(new Set(rows.map((r) => r.gateId)).size).toBe(rows.length);
    expect(paid.length).toBe(rows.length - 1);

    // And fifty copies of the one right next voucher, to fifty gates: one is taken.
    const next = row!.charged + PRICE;
    if (next <= 10n * PRICE) {
      const more = await Promise.all(Array.from({ length: 50 }, () => gate()));
      const voucher = await channel.voucher(next);
      const copies = await Promise.all(
        more.map(async (offer) => verify(offer, await channel.payment(offer, next, { voucher }))),
      );
      expect(copies.filter((a) => a.status === 200)).toHaveLength(1);
    }
  });

  it('lets one of two channels paying one gate at once pay it; the other is refused and its channel does not move', async () => {
    const a = await openChannel(50_000n);
    const b = await openChannel(50_000n);
    for (let round = 0; round < 3; round++) {
      const offer = await gate();
      const before = { a: await chargedOf(a.channel.channelId), b: await chargedOf(b.channel.channelId) };
      const answers = await Promise.all([
        verify(offer, await a.channel.payment(offer, before.a + PRICE)),
        verify(offer, await b.channel.payment(offer, before.b + PRICE)),
      ]);
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
      const moved = [
        (await chargedOf(a.channel.channelId)) - before.a,
        (await chargedOf(b.channel.channelId)) - before.b,
      ].sort();
      expect(moved).toEqual([0n, PRICE]);
      expect(await app.database.prisma.payment.count({ where: { gateId: readGate(offer.id)!.ref } })).toBe(1);
    }
  });

  it('answers the same voucher sent ten times at once to its gate with one payment and the same token', async () => {
    const { channel } = await openChannel(100_000n);
    // Several rounds, each the channel's next voucher: a copy that reads the channel just after
    // another copy was recorded must still get the same answer, not the corrective 402.
    for (let round = 2n; round <= 6n; round++) {
      const offer = await gate();
      const payment = await channel.payment(offer, round * PRICE);
      const answers = await Promise.all(Array.from({ length: 10 }, () => verify(offer, payment)));
      expect([round, answers.map((a) => a.status)]).toEqual([round, Array(10).fill(200)]);
      expect(new Set(answers.map((a) => a.body.access_token)).size).toBe(1);
    }
    expect(await app.database.prisma.payment.count({ where: { channelId: channel.channelId } })).toBe(6);
  });

  it('answers the same voucher sent ten times at once, each through a gate of its own for one page (sent without naming a gate), with one payment and the same token', async () => {
    // A site of its own: these gates do not count against the shared site's limit.
    const { gateOf, channel } = await channelOnOwnSite(payee, '/article/first');
    for (let round = 2n; round <= 4n; round++) {
      const path = `/article/${randomUUID()}`;
      const offers = await Promise.all(Array.from({ length: 10 }, () => gateOf(path)));
      const payment = await channel.payment(offers[0], round * PRICE);
      const answers = await Promise.all(offers.map((offer) => verify(offer, { ...payment, accepted: offer.accepted })));
      expect([round, answers.map((a) => a.status)]).toEqual([round, Array(10).fill(200)]);
      expect(new Set(answers.map((a) => a.body.access_token)).size).toBe(1);
    }
    expect(await app.database.prisma.payment.count({ where: { channelId: channel.channelId } })).toBe(4);
    expect(await chargedOf(channel.channelId)).toBe(4n * PRICE);
  });

  it('takes no voucher while the relayer cannot pay for a claim: nothing could collect it before the payer withdraws', async () => {
    // A voucher is money only once claimed; with no gas for a claim, a payer withdrawing after the
    // delay took back what it was charged (the pages served, the receiver paid nothing).
    const { channel } = await openChannel(50_000n);
    const relayer = app.chain.relayer.account.address;
    const client = devTestClient(app.chain.rpcUrl);
    const gas = await app.chain.publicClient.getBalance({ address: relayer });
    // Gas for a claim or two, not for a claim and a settle per receiver waiting: too little.
    const price = await app.chain.publicClient.getGasPrice();
    await client.setBalance({ address: relayer, value: 2n * price * SETTLEMENT_GAS });
    try {
      // The reading is kept a few seconds: wait it out.
      await new Promise((resolve) => setTimeout(resolve, RELAYER_GAS_READ_MS + 100));
      const offer = await gate();
      const refused = await verify(offer, await channel.payment(offer, 2n * PRICE));
      expect([refused.status, refused.body.detail]).toEqual([503, expect.stringMatching(/cannot pay for a claim/)]);
      expect(refused.body.access_token).toBeUndefined();
      expect(await chargedOf(channel.channelId)).toBe(PRICE);
    } finally {
      await client.setBalance({ address: relayer, value: gas });
    }
    await new Promise((resolve) => setTimeout(resolve, RELAYER_GAS_READ_MS + 100));
    const offer = await gate();
    expect((await verify(offer, await channel.payment(offer, 2n * PRICE))).status).toBe(200);
  });

  it('answers a voucher it took for the gate as before once the site turned batch settlement off (its answer lost), and takes no other', async () => {
    const { own, gateOf, channel } = await channelOnOwnSite(payee, '/article/before-off');
    const offer = await gateOf('/article/taken-before-off');
    const payment = await channel.payment(offer, 2n * PRICE);
    const paid = await verify(offer, payment);
    expect(paid.status).toBe(200);
    const other = await gateOf('/article/offered-before-off');
    const samePage = await gateOf('/article/taken-before-off');
    const off = await app.call('PATCH', `/v1/sites/${own.site.siteId}`, {
      body: { batch_settlement: false },
      headers: own.publisher.auth,
    });
    expect(off.status).toBe(200);

    for (const body of [{ payment }, { payment, recorded_only: true }]) {
      const again = await app.call('POST', `/v1/gates/${offer.id}/verify`, { body });
      expect([again.status, again.body.access_token]).toEqual([200, paid.body.access_token]);
    }
    // Sent again without naming its gate (paid ahead, its answer lost), through another gate of its page: the same.
    const resent = await verify(samePage, { ...payment, accepted: samePage.accepted });
    expect([resent.status, resent.body.access_token]).toEqual([200, paid.body.access_token]);
    // The same voucher for another gate, a forged copy of it, and the channel's next voucher: refused.
    const refusals = [
      await verify(other, { ...payment, accepted: other.accepted }),
      await verify(
        offer,
        await channel.payment(offer, 2n * PRICE, { voucher: await channel.voucher(2n * PRICE, newWallet()) }),
      ),
      await verify(other, await channel.payment(other, 3n * PRICE)),
    ];
    // Each refused as vouchers are on a site without them: the forged copy's answer does not tell that the voucher was taken.
    expect(refusals.map((answer) => [answer.status, answer.body.access_token, answer.body.reason])).toEqual([
      [402, undefined, BATCH_REASONS.scheme],
      [402, undefined, BATCH_REASONS.scheme],
      [402, undefined, BATCH_REASONS.scheme],
    ]);
    expect(await chargedOf(channel.channelId)).toBe(2n * PRICE);
  });

  it('refuses vouchers for a site that has batch settlement off', async () => {
    const { channel } = await openChannel(50_000n);
    const offer = await gate();
    await app.call('PATCH', `/v1/sites/${site.siteId}`, { body: { batch_settlement: false }, headers: publisher.auth });
    try {
      const response = await verify(offer, await channel.payment(offer, 2n * PRICE));
      expect(response.status).toBe(402);
      expect(response.body.reason).toBe(BATCH_REASONS.scheme);
    } finally {
      await app.call('PATCH', `/v1/sites/${site.siteId}`, {
        body: { batch_settlement: true },
        headers: publisher.auth,
      });
    }
  });
});

/** Whether `id` took `payer`'s deposit lease (a deposit of authorization `nonce`, stale after 120 s). */
async function takeLease(app: TestApp, payer: string, id: string, nonce: string): Promise<boolean> {
  const lease = {
    chainId: app.chain.chainId,
    asset: app.chain.usdc,
    payer,
    id,
    nonce,
    amount: 1n,
    validBefore: new Date(Date.now() + 3_600_000),
  };
  return (await app.app.get(ChannelStore).takeDepositLease(lease, 120)) !== null;
}
