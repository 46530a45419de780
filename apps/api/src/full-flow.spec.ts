import { GateCounterService } from './gates/gate-counter.service';
import { freshIp } from '../test/fixtures';
import { fundUsdc, historyHeaders, newWallet, signPayment, usdcBalance } from '../test/test-agent';
import { startTestApp, type TestApp } from '../test/test-app';

/** The whole story through HTTP: a publisher prices a page, a bot pays in USDC, everyone sees it. */
describe('full flow over HTTP on the local chain', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ isolateChain: true });
  });
  afterAll(() => app.close());

  it('register → site → pricing → payout → 402 → signed authorization → paid → token → profile and stats', async () => {
    const registered = await app.call('POST', '/v1/publishers/register', {
      body: { email: 'editor@news.example', password: 'correct horse battery', name: 'News' },
      headers: { 'x-forwarded-for': freshIp() },
    });
    expect(registered.status).toBe(201);
    const auth = { authorization: `Bearer ${registered.body.api_key}` };

    const site = await app.call('POST', '/v1/sites', { body: { domain: 'news.example' }, headers: auth });
    expect(site.status).toBe(201);
    const siteToken = { 'x-site-token': site.body.site_token };

    const pricing = await app.call('PUT', `/v1/sites/${site.body.site_id}/pricing`, {
      body: {
        default_price_usd: '0.002',
        rules: [
          { path_pattern: '/premium/*', price_usd: '0.05' },
          { path: '/free/*', price_usd: '0' },
        ],
      },
      headers: auth,
    });
    expect(pricing.body).toEqual({ rules_applied: 2 });

    const payTo = newWallet().address;
    const payout = await app.call('PATCH', '/v1/publishers/me', {
      body: { payout_address: payTo },
      headers: { ...auth, 'x-confirm-password': 'correct horse battery' },
    });
    expect(payout.body.payout_address).toBe(payTo);

    const agent = newWallet();
    await fundUsdc(app, agent.address, '1');

    const gate = await app.call('POST', '/v1/gates', { body: { url: '/premium/report?page=1' }, headers: siteToken });
    expect(gate.status).toBe(402);
    expect(gate.body).toMatchObject({ url: '/premium/report', price_usd: '0.05', amount: '50000', pay_to: payTo });

    const paid = await app.call('POST', `/v1/gates/${gate.body.id}/verify`, {
      body: { payment: await signPayment(app, agent, gate.body) },
    });
    expect(paid.status).toBe(200);
    expect(await usdcBalance(app, payTo)).toBe(50_000n);
    expect(await usdcBalance(app, agent.address)).toBe(950_000n);

    const check = await app.call('POST', '/v1/access-tokens/verify', {
      body: { token: paid.body.access_token, url: '/premium/report' },
      headers: siteToken,
    });
    expect(check.body).toEqual({
      valid: true,
      gate_id: gate.body.ref,
      url: '/premium/report',
      exp: expect.any(Number),
    });

    const profile = await app.call('GET', '/v1/agents/me', {
      headers: { 'x-wallet-address': agent.address.toLowerCase() },
    });
    expect(profile.body).toMatchObject({
      address: agent.address,
      payments_count: 1,
      total_spent_usd: '0.05',
      sites_count: 1,
    });
    const history = await app.call('GET', '/v1/agents/me/payments', { headers: await historyHeaders(app, agent) });
    expect(history.body.items).toEqual([
      expect.objectContaining({
        gate_id: gate.body.ref,
        url: '/premium/report',
        tx_hash: paid.body.tx_hash,
        price_usd: '0.05',
      }),
    ]);

    // A second gate that nobody pays: it counts as created, not as paid.
    await app.call('POST', '/v1/gates', { body: { url: '/article/1' }, headers: siteToken });
    // Gates offered are counted in memory and written in batches (every 10 s and at shutdown): write them now.
    await app.app.get(GateCounterService).flush();
    const stats = await app.call('GET', `/v1/sites/${site.body.site_id}/stats`, { headers: auth });
    expect(stats.body).toMatchObject({
      revenue_usd: '0.05',
      paid_gates: 1,
      gates_created: 2,
      conversion: '0.5000',
      unique_agents: 1,
      top_paths: [{ url: '/premium/report', paid_gates: 1, revenue_usd: '0.05' }],
      top_agents: [{ address: agent.address, paid_gates: 1, revenue_usd: '0.05' }],
    });
    const sitePayments = await app.call('GET', `/v1/sites/${site.body.site_id}/payments`, { headers: auth });
    expect(sitePayments.body.items[0]).toMatchObject({ payer: agent.address, tx_hash: paid.body.tx_hash });
  });
});
