import {
  parseBatchSettlementPayment,
  transferProofMessage,
  X402_BATCH_SETTLEMENT_ADDRESS,
  X402_ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
} from '@crawlgate/core';
import { getAddress } from 'viem';
import {
  batchSettlementSite,
  createSite,
  middlewareGate,
  pricedSite,
  registerPublisher,
  type TestPublisher,
} from '../../test/fixtures';
import { fundEth, fundUsdc, newWallet, sendUsdc, signPayment, usdcBalance, walletOf } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { batchGate, testChannel, type BatchOffer } from '../../test/test-channel';
import { depositCalldata } from '../chain/escrow';

/*
 * A payout address is where payers' money goes. Named as the token's own address (USDC refuses
 * transfers to it), the escrow's or its deposit collector's (money sent there is stranded: no
 * channel owns it), or the API's own relayer or claim authorizer (the service never holds a
 * publisher's money), every sale would fail or be lost. Anyone can name such an address: they
 * are public.
 */
describe("payout addresses: never the token's, the escrow's or the API's own", () => {
  let app: TestApp;
  let publisher: TestPublisher;
  beforeAll(async () => {
    app = await startTestApp();
    publisher = await registerPublisher(app);
  });
  afterAll(() => app.close());

  const name = (payoutAddress: string) =>
    app.call('PATCH', '/v1/publishers/me', {
      body: { payout_address: payoutAddress },
      headers: { ...publisher.auth, 'x-confirm-password': publisher.password },
    });

  const ownAddresses = () => {
    const batch = app.chain.batchSettlement!;
    return [
      [app.chain.usdc, /USDC token contract/],
      [batch.escrow, /batch-settlement escrow/],
      [X402_BATCH_SETTLEMENT_ADDRESS, /batch-settlement escrow/],
      [batch.collector, /deposit collector/],
      [X402_ERC3009_DEPOSIT_COLLECTOR_ADDRESS, /deposit collector/],
      [app.chain.relayer.account.address, /relayer/],
      [batch.authorizer.address, /claim authorizer/],
    ] as const;
  };

  // Fourteen refusals: more than X-Confirm-Password's checks allow, so none of them spends one.
  it('refuses each, in any spelling, with a detail naming what it is, and keeps the address named before', async () => {
    const mine = '0x1111111111111111111111111111111111111111';
    expect((await name(mine)).status).toBe(200);
    expect(app.chain.batchSettlement).not.toBeNull();
    for (const [address, what] of ownAddresses())
      for (const spelling of [getAddress(address), address.toLowerCase()]) {
        const refused = await name(spelling);
        expect([refused.status, refused.body.detail]).toEqual([400, expect.stringMatching(what)]);
      }
    const account = await app.call('GET', '/v1/publishers/me', { headers: publisher.auth });
    expect(account.body.payout_address).toBe(getAddress(mine));
  });

  it('opens no gate to one named before the check: 409, nothing offered', async () => {
    const site = await createSite(app, publisher);
    await app.call('PUT', `/v1/sites/${site.siteId}/pricing`, {
      body: { default_price_usd: '0.01', rules: [] },
      headers: publisher.auth,
    });
    const openGate = () =>
      app.call('POST', '/v1/gates', { body: { url: '/a' }, headers: { 'x-site-token': site.siteToken } });
    expect((await openGate()).status).toBe(402);
    for (const [address] of ownAddresses()) {
      await app.database.prisma.publisher.update({
        where: { id: publisher.publisherId },
        data: { payoutAddress: getAddress(address) },
      });
      const gate = await openGate();
      expect([gate.status, gate.body.detail]).toEqual([409, expect.stringMatching(/cannot charge/)]);
      // The middleware mints its gates from the site's terms: they name no one to pay.
      const terms = await app.call('GET', '/v1/site', { headers: { 'x-site-token': site.siteToken } });
      expect([terms.status, terms.body.pay_to]).toEqual([200, null]);
    }
  });

  it('takes no payment for a gate a middleware minted to one before it reloaded the terms: 409, nothing charged', async () => {
    const { publisher: owner, site } = await pricedSite(app, newWallet().address);
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    for (const [address] of ownAddresses()) {
      await app.database.prisma.publisher.update({
        where: { id: owner.publisherId },
        data: { payoutAddress: address },
      });
      const gate = middlewareGate(app, site, address, '/premium/a');
      const offer = {
        id: gate.id,
        amount: '10000',
        pay_to: address,
        accepts: [{ network: app.chain.network.x402Network, payTo: address, maxAmountRequired: '10000' }],
      };
      const paid = await app.call('POST', `/v1/gates/${offer.id}/verify`, {
        body: { payment: await signPayment(app, payer, offer) },
      });
      expect([address, paid.status, paid.body.detail, paid.body.access_token]).toEqual([
        address,
        409,
        expect.stringMatching(/no payment may go to; nothing was charged/),
        undefined,
      ]);
    }
    expect(await usdcBalance(app, payer.address)).toBe(1_000_000n);
    expect(await app.database.prisma.payment.count({ where: { siteId: site.siteId } })).toBe(0);
  });

  it("takes no transfer proof for such a gate: a deposit through the collector is any depositor's own (helper-359)", async () => {
    const { publisher: owner, site } = await pricedSite(app, newWallet().address);
    const relayer = app.chain.relayer.account.address;
    await app.database.prisma.publisher.update({ where: { id: owner.publisherId }, data: { payoutAddress: relayer } });
    const gate = middlewareGate(app, site, relayer, '/premium/b');
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    await fundEth(app, payer.address);
    const hash = await sendUsdc(app, payer, relayer, 10_000n);
    const paid = await app.call('POST', `/v1/gates/${gate.id}/verify`, {
      body: {
        tx_hash: hash,
        signature: await payer.signMessage({ message: transferProofMessage(gate.terms.ref, hash) }),
      },
    });
    expect([paid.status, paid.body.detail, paid.body.access_token]).toEqual([
      409,
      expect.stringMatching(/no payment may go to/),
      undefined,
    ]);
  });

  it('takes no voucher for such a gate, deposited or not; a refund of its channel is judged as any refund', async () => {
    const { publisher: owner, site } = await batchSettlementSite(app, newWallet().address);
    const template = await batchGate(app, site);
    const relayer = app.chain.relayer.account.address;
    await app.database.prisma.publisher.update({ where: { id: owner.publisherId }, data: { payoutAddress: relayer } });
    const gate = middlewareGate(app, site, relayer, '/premium/c');
    const offer: BatchOffer = { id: gate.id, accepted: { ...template.accepted, payTo: relayer } };
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    await fundEth(app, payer.address);
    const channel = testChannel(app, payer, offer.accepted);
    const verify = (payment: unknown) => app.call('POST', `/v1/gates/${offer.id}/verify`, { body: { payment } });
    const refused = [409, expect.stringMatching(/no payment may go to/), undefined];

    // The relayer would deposit for it: nothing is sent.
    const deposited = await verify(await channel.payment(offer, 10_000n, { deposit: 50_000n }));
    expect([deposited.status, deposited.body.detail, deposited.body.access_token]).toEqual(refused);
    expect(await usdcBalance(app, payer.address)).toBe(1_000_000n);

    // Deposited by the payer itself: the channel holds the money, and still no voucher is taken.
    const parsed = parseBatchSettlementPayment(await channel.payment(offer, 10_000n, { deposit: 50_000n }));
    if (!parsed.ok || !parsed.payment.deposit) throw new Error('not a deposit payment');
    const hash = await walletOf(app, payer).sendTransaction({
      to: app.chain.batchSettlement!.escrow,
      data: depositCalldata(
        app.chain.batchSettlement!,
        parsed.payment.channelConfig,
        50_000n,
        parsed.payment.deposit.erc3009,
      ),
    });
    expect((await app.chain.publicClient.waitForTransactionReceipt({ hash })).status).toBe('success');
    const voucher = await verify(await channel.payment(offer, 10_000n));
    expect([voucher.status, voucher.body.detail, voucher.body.access_token]).toEqual(refused);
    expect(await app.database.prisma.payment.count({ where: { siteId: site.siteId } })).toBe(0);

    // A refund pays no one: it reaches the refund's own checks (nothing charged: its voucher of 0 is anyone's).
    const zero = await channel.payment(offer, 0n);
    const refund = await verify({ ...zero, payload: { ...zero.payload, type: 'refund' } });
    expect([refund.status, refund.body.detail]).toEqual([402, expect.stringMatching(/public/)]);
  });
});
