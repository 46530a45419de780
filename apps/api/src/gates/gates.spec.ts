import { decodeBase64Json } from '@crawlgate/core';
import { createSite, openGate, pricedSite, registerPublisher, type TestSite } from '../../test/fixtures';
import { newWallet } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { GateSweeperService } from './gate-sweeper.service';

describe('gates API', () => {
  let app: TestApp;
  let site: TestSite;
  const payTo = newWallet().address;
  beforeAll(async () => {
    app = await startTestApp();
    ({ site } = await pricedSite(app, payTo));
  });
  afterAll(() => app.close());

  const create = (url: unknown, token = site.siteToken) => app.call('POST', '/v1/gates', { body: { url }, headers: { 'x-site-token': token } });

  it('answers a priced path with 402, the gate, x402 v1 fields and the v2 PAYMENT-REQUIRED header', async () => {
    const response = await create('/article/1?utm=x');
    expect(response.status).toBe(402);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const gate = response.body;
    expect(gate).toMatchObject({
      site_id: site.siteId,
      url: '/article/1',
      status: 'open',
      price_usd: '0.01',
      amount: '10000',
      asset: app.chain.usdc,
      network: 'local',
      chain_id: 31337,
      pay_to: payTo,
      x402Version: 1,
      error: expect.any(String),
    });
    expect(gate.verify_url).toBe(`${app.baseUrl}/v1/gates/${gate.id}/verify`);
    expect(Date.parse(gate.expires_at) - Date.now()).toBeGreaterThan(14 * 60_000);
    expect(gate.accepts).toEqual([
      {
        scheme: 'exact',
        network: 'local',
        maxAmountRequired: '10000',
        resource: `https://${site.domain}/article/1?utm=x`,
        description: expect.stringContaining('/article/1'),
        mimeType: '',
        payTo,
        maxTimeoutSeconds: 300,
        asset: app.chain.usdc,
        extra: { name: 'USD Coin', version: '2', gate_id: gate.id },
      },
    ]);
    const v2 = decodeBase64Json(response.headers.get('payment-required')!) as Record<string, any>;
    expect(v2).toMatchObject({
      x402Version: 2,
      resource: { url: `https://${site.domain}/article/1?utm=x` },
      accepts: [{ scheme: 'exact', network: 'eip155:31337', amount: '10000', asset: app.chain.usdc, payTo, extra: { name: 'USD Coin', version: '2' } }],
    });
  });

  it('answers a free path with 200 and stores nothing', async () => {
    const before = await app.database.prisma.gate.count();
    const response = await create('/free/post');
    expect(response).toMatchObject({ status: 200, body: { status: 'free', price_usd: '0', url: '/free/post' } });
    expect(await app.database.prisma.gate.count()).toBe(before);
  });

  it('prices by the site’s rules and follows pricing changes at once', async () => {
    expect((await create('/cheap/a')).body.price_usd).toBe('0.001');
    const publisher = await registerPublisher(app);
    const other = await createSite(app, publisher);
    await app.call('PATCH', '/v1/publishers/me', { body: { payout_address: payTo }, headers: { ...publisher.auth, 'x-confirm-password': publisher.password } });
    await app.call('PUT', `/v1/sites/${other.siteId}/pricing`, { body: { default_price_usd: '0.5' }, headers: publisher.auth });
    expect((await create('/x', other.siteToken)).body.price_usd).toBe('0.5');
    await app.call('PUT', `/v1/sites/${other.siteId}/pricing`, { body: { default_price_usd: '0.25' }, headers: publisher.auth });
    expect((await create('/x', other.siteToken)).body.price_usd).toBe('0.25');
  });

  it('answers 409 when the publisher has no payout address', async () => {
    const publisher = await registerPublisher(app);
    const unpaid = await createSite(app, publisher);
    await app.call('PUT', `/v1/sites/${unpaid.siteId}/pricing`, { body: { default_price_usd: '0.01' }, headers: publisher.auth });
    const response = await create('/a', unpaid.siteToken);
    expect(response.status).toBe(409);
    expect(response.body.detail).toMatch(/payout address/);
  });

  it.each([[''], ['no-slash'], ['ftp://x/y'], ['/has space'], [42], [null], ['/' + 'a'.repeat(2048)]])('answers 422 for the url #%#', async (url) => {
    const response = await create(url);
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc).toEqual(['body', 'url']);
  });

  it('answers 401 without a valid site token', async () => {
    expect((await app.call('POST', '/v1/gates', { body: { url: '/a' } })).status).toBe(401);
    expect((await create('/a', `st_${'A'.repeat(43)}`)).status).toBe(401);
  });

  it('shows a gate by id, and reports unknown or expired ones as 404 "Gate not found or expired"', async () => {
    const gate = await openGate(app, site, '/status/1');
    const shown = await app.call('GET', `/v1/gates/${gate.id}`);
    expect(shown).toMatchObject({ status: 200, body: { id: gate.id, status: 'open', paid_at: null, tx_hash: null } });

    await app.database.prisma.gate.update({ where: { id: gate.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    for (const id of [gate.id, '00000000-0000-0000-0000-000000000000', 'not-a-uuid']) {
      const response = await app.call('GET', `/v1/gates/${id}`);
      expect(response).toMatchObject({ status: 404, body: { detail: 'Gate not found or expired' } });
    }
    const verify = await app.call('POST', `/v1/gates/${gate.id}/verify`, { body: { tx_hash: `0x${'1'.repeat(64)}` } });
    expect(verify).toMatchObject({ status: 404, body: { detail: 'Gate not found or expired' } });
  });

  it('sweeps expired unpaid gates: marked expired, purged after retention, counted in daily stats still', async () => {
    const gate = await openGate(app, site, '/sweep/1');
    const past = new Date(Date.now() - 2 * 24 * 3600 * 1000);
    await app.database.prisma.gate.update({ where: { id: gate.id }, data: { expiresAt: past } });
    const sweeper = app.app.get(GateSweeperService);
    const first = await sweeper.runOnce();
    expect(first.expired).toBeGreaterThanOrEqual(1);
    expect(await app.database.prisma.gate.findUnique({ where: { id: gate.id } })).toBeNull();
    const counts = await app.database.prisma.siteDailyCount.findMany({ where: { siteId: site.siteId } });
    expect(counts.reduce((sum, row) => sum + row.gatesCreated, 0)).toBeGreaterThanOrEqual(1);
  });

  it('limits gate creation to 200 a minute per site token', async () => {
    const publisher = await registerPublisher(app);
    const busy = await createSite(app, publisher);
    const statuses = await Promise.all(Array.from({ length: 201 }, () => create('/free-for-all', busy.siteToken).then((r) => r.status)));
    expect(statuses.filter((status) => status === 429)).toHaveLength(1);
    expect(statuses.filter((status) => status === 200)).toHaveLength(200);
  });
});
