import { decodeBase64Json, X402_BATCH_SETTLEMENT_ADDRESS } from '@crawlgate/core';
import { pricedSite, type TestPublisher, type TestSite } from '../../test/fixtures';
import { newWallet } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { LOCAL_CLAIM_AUTHORIZER } from '../chain/local-chain';

/*
 * Step one of issue 14: a site switch offers x402 batch-settlement beside exact, with the `extra`
 * the @x402/evm client builds its channel from, in the gate body, the PAYMENT-REQUIRED header and
 * GET /v1/site (which the middleware mints its own gates from). Off by default.
 */
describe('batch-settlement offer', () => {
  let app: TestApp;
  let site: TestSite;
  let publisher: TestPublisher;
  const payTo = newWallet().address;
  beforeAll(async () => {
    app = await startTestApp();
    ({ site, publisher } = await pricedSite(app, payTo));
  });
  afterAll(() => app.close());

  const gate = () =>
    app.call('POST', '/v1/gates', { body: { url: '/article/1' }, headers: { 'x-site-token': site.siteToken } });
  const siteOffer = () => app.call('GET', '/v1/site', { headers: { 'x-site-token': site.siteToken } });
  const setSwitch = (value: unknown) =>
    app.call('PATCH', `/v1/sites/${site.siteId}`, { body: { batch_settlement: value }, headers: publisher.auth });

  it('is off until the publisher turns it on: exact alone, and GET /v1/site says null', async () => {
    const response = await gate();
    expect(response.body.accepts.map((a: { scheme: string }) => a.scheme)).toEqual(['exact']);
    expect(
      (decodeBase64Json(response.headers.get('payment-required')!) as any).accepts.map(
        (a: { scheme: string }) => a.scheme,
      ),
    ).toEqual(['exact']);
    expect((await siteOffer()).body.batch_settlement).toBeNull();
    expect((await app.call('GET', `/v1/sites/${site.siteId}`, { headers: publisher.auth })).body.batch_settlement).toBe(
      false,
    );
  });

  it('once on, offers batch-settlement after exact in the body and the v2 header, with the channel terms', async () => {
    const patched = await setSwitch(true);
    expect(patched.status).toBe(200);
    expect(patched.body.batch_settlement).toBe(true);

    const response = await gate();
    expect(response.status).toBe(402);
    const [exact, batch] = response.body.accepts;
    expect(exact.scheme).toBe('exact');
    const extra = {
      name: 'USD Coin',
      version: '2',
      receiverAuthorizer: LOCAL_CLAIM_AUTHORIZER.address,
      withdrawDelay: 86_400,
      escrow: X402_BATCH_SETTLEMENT_ADDRESS,
      gate_id: response.body.id,
    };
    expect(batch).toEqual({ ...exact, scheme: 'batch-settlement', extra });
    const v2 = decodeBase64Json(response.headers.get('payment-required')!) as any;
    expect(v2.accepts).toHaveLength(2);
    expect(v2.accepts[1]).toEqual({
      scheme: 'batch-settlement',
      network: 'eip155:31337',
      amount: '10000',
      asset: app.chain.usdc,
      payTo,
      maxTimeoutSeconds: exact.maxTimeoutSeconds,
      extra,
    });

    expect((await siteOffer()).body.batch_settlement).toEqual({
      escrow: X402_BATCH_SETTLEMENT_ADDRESS,
      receiver_authorizer: LOCAL_CLAIM_AUTHORIZER.address,
      withdraw_delay_seconds: 86_400,
    });
    // GET /v1/gates/{id} states the same offer.
    expect((await app.call('GET', `/v1/gates/${response.body.id}`)).body.accepts[1].extra).toEqual(extra);
  });

  it('takes only a boolean (422 otherwise), and turns off again', async () => {
    for (const bad of ['yes', 1, null]) {
      const response = await setSwitch(bad);
      expect(response.status).toBe(422);
      expect(response.body.detail[0].loc).toEqual(['body', 'batch_settlement']);
    }
    expect((await setSwitch(false)).body.batch_settlement).toBe(false);
    expect((await gate()).body.accepts).toHaveLength(1);
  });

  it('has the escrow and its deposit collector on the local chain, at x402’s addresses', async () => {
    const code = await app.chain.publicClient.getCode({ address: app.chain.batchSettlement!.escrow });
    expect(code?.length).toBeGreaterThan(2);
    expect(await app.chain.publicClient.getCode({ address: app.chain.batchSettlement!.collector })).not.toBe('0x');
  });
});

describe('batch-settlement offer without a claim authorizer', () => {
  it('refuses to turn it on (409) and offers exact alone', async () => {
    const app = await startTestApp();
    try {
      (app.chain as { batchSettlement: unknown }).batchSettlement = null;
      const { site, publisher } = await pricedSite(app, newWallet().address);
      const response = await app.call('PATCH', `/v1/sites/${site.siteId}`, {
        body: { batch_settlement: true },
        headers: publisher.auth,
      });
      expect(response.status).toBe(409);
      expect(response.body.detail).toMatch(/claim authorizer/);
    } finally {
      await app.close();
    }
  });
});
