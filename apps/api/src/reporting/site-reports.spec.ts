import { createSite, registerPublisher, type TestPublisher, type TestSite } from '../../test/fixtures';
import { startTestApp, type TestApp } from '../../test/test-app';
import { addGatesCreated, insertPayment, newAddress, walkPages } from './test-payments';

const at = (iso: string) => new Date(iso);
const zeroDay = (day: string) => ({ day, revenue_usd: '0', paid_gates: 0, gates_created: 0 });

describe('site stats and payments API', () => {
  let app: TestApp;
  let owner: TestPublisher;
  let stranger: TestPublisher;
  beforeAll(async () => {
    app = await startTestApp();
    owner = await registerPublisher(app);
    stranger = await registerPublisher(app);
  });
  afterAll(() => app.close());

  const stats = (site: TestSite, query = '', publisher = owner) =>
    app.call('GET', `/v1/sites/${site.siteId}/stats${query}`, { headers: publisher.auth });

  describe('GET /v1/sites/{site_id}/stats', () => {
    const [agent1, agent2, agent3] = [newAddress(), newAddress(), newAddress()];
    let site: TestSite;
    beforeAll(async () => {
      site = await createSite(app, owner);
      const sibling = await createSite(app, owner);
      const pay = (payer: string, amount: bigint, url: string, iso: string) =>
        insertPayment(app, owner, site, { payer, amount, url, confirmedAt: at(iso) });
      await pay(agent1, 10_000n, '/a', '2026-10-02T00:00:00.000Z');
      await pay(agent2, 10_000n, '/a', '2026-10-02T23:59:59.999Z');
      await pay(agent1, 50_000n, '/b', '2026-10-04T12:00:00.000Z');
      await pay(agent3, 1000n, '/c', '2026-10-05T01:00:00.000Z');
      await pay(agent3, 1000n, '/c', '2026-10-06T01:00:00.000Z');
      await pay(agent3, 1000n, '/c', '2026-10-07T23:59:59.999Z');
      // Confirmed, but just outside the range.
      await pay(agent1, 900_000n, '/a', '2026-09-30T23:59:59.999Z');
      await pay(agent1, 900_000n, '/a', '2026-10-08T00:00:00.000Z');
      // In the range, but not confirmed, or another site's.
      await insertPayment(app, owner, site, { payer: agent2, amount: 800_000n, url: '/b', status: 'submitted' });
      await insertPayment(app, owner, site, { payer: agent2, amount: 800_000n, url: '/b', status: 'submitting' });
      await insertPayment(app, owner, sibling, {
        payer: agent2,
        amount: 700_000n,
        url: '/a',
        confirmedAt: at('2026-10-03T00:00:00.000Z'),
      });
      await addGatesCreated(app, site, '2026-10-02', 4);
      await addGatesCreated(app, site, '2026-10-04', 2);
      await addGatesCreated(app, site, '2026-10-05', 3);
      await addGatesCreated(app, site, '2026-09-30', 50);
      await addGatesCreated(app, site, '2026-10-08', 50);
      await addGatesCreated(app, sibling, '2026-10-03', 50);
    });

    it('sums revenue, paid and created gates, conversion and agents over the range', async () => {
      const response = await stats(site, '?from=2026-10-01&to=2026-10-07');
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        site_id: site.siteId,
        from: '2026-10-01',
        to: '2026-10-07',
        revenue_usd: '0.073',
        revenue_amount: '73000',
        paid_gates: 6,
        gates_created: 9,
        conversion: '0.6667',
        unique_agents: 3,
      });
    });

    it('ranks paths and agents by revenue', async () => {
      const { body } = await stats(site, '?from=2026-10-01&to=2026-10-07');
      expect(body.top_paths).toEqual([
        { url: '/b', paid_gates: 1, revenue_usd: '0.05' },
        { url: '/a', paid_gates: 2, revenue_usd: '0.02' },
        { url: '/c', paid_gates: 3, revenue_usd: '0.003' },
      ]);
      expect(body.top_agents).toEqual([
        { address: agent1, paid_gates: 2, revenue_usd: '0.06' },
        { address: agent2, paid_gates: 1, revenue_usd: '0.01' },
        { address: agent3, paid_gates: 3, revenue_usd: '0.003' },
      ]);
    });

    it('lists every day of the range, zeros included, by UTC day', async () => {
      const { body } = await stats(site, '?from=2026-10-01&to=2026-10-07');
      expect(body.by_day).toEqual([
        zeroDay('2026-10-01'),
        { day: '2026-10-02', revenue_usd: '0.02', paid_gates: 2, gates_created: 4 },
        zeroDay('2026-10-03'),
        { day: '2026-10-04', revenue_usd: '0.05', paid_gates: 1, gates_created: 2 },
        { day: '2026-10-05', revenue_usd: '0.001', paid_gates: 1, gates_created: 3 },
        { day: '2026-10-06', revenue_usd: '0.001', paid_gates: 1, gates_created: 0 },
        { day: '2026-10-07', revenue_usd: '0.001', paid_gates: 1, gates_created: 0 },
      ]);
    });

    it('takes ISO date-times as the UTC days they fall on', async () => {
      const response = await stats(
        site,
        `?from=${encodeURIComponent('2026-10-04T22:00:00-03:00')}&to=2026-10-05T10:00:00Z`,
      );
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        from: '2026-10-05',
        to: '2026-10-05',
        revenue_usd: '0.001',
        paid_gates: 1,
        gates_created: 3,
        conversion: '0.3333',
      });
    });

    it('answers zeros, empty lists and conversion "0" for a range without activity', async () => {
      const response = await stats(site, '?from=2026-01-01&to=2026-01-02');
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        site_id: site.siteId,
        from: '2026-01-01',
        to: '2026-01-02',
        revenue_usd: '0',
        revenue_amount: '0',
        paid_gates: 0,
        gates_created: 0,
        conversion: '0',
        unique_agents: 0,
        top_paths: [],
        top_agents: [],
        by_day: [zeroDay('2026-01-01'), zeroDay('2026-01-02')],
      });
    });

    it('covers the last 30 days up to today by default', async () => {
      const fresh = await createSite(app, owner);
      const today = new Date().toISOString().slice(0, 10);
      await insertPayment(app, owner, fresh, { payer: newAddress(), amount: 250_000n });
      await addGatesCreated(app, fresh, today, 4);
      const response = await stats(fresh);
      expect(response.status).toBe(200);
      expect(response.body.to).toBe(today);
      expect(response.body.by_day).toHaveLength(30);
      expect(response.body.by_day[0].day).toBe(response.body.from);
      expect(response.body.by_day[29]).toEqual({ day: today, revenue_usd: '0.25', paid_gates: 1, gates_created: 4 });
      expect(response.body.conversion).toBe('0.2500');
    });

    it('keeps the ten best paths', async () => {
      const busy = await createSite(app, owner);
      for (let i = 1; i <= 12; i++)
        await insertPayment(app, owner, busy, {
          payer: newAddress(),
          amount: BigInt(i * 1000),
          url: `/p${i}`,
          confirmedAt: at('2026-10-10T00:00:00Z'),
        });
      const { body } = await stats(busy, '?from=2026-10-10&to=2026-10-10');
      expect(body.top_paths.map((path: { url: string }) => path.url)).toEqual([
        '/p12',
        '/p11',
        '/p10',
        '/p9',
        '/p8',
        '/p7',
        '/p6',
        '/p5',
        '/p4',
        '/p3',
      ]);
      expect(body.top_agents).toHaveLength(10);
      expect(body.unique_agents).toBe(12);
    });

    it.each([
      ['?from=yesterday', 'from', 'date_format'],
      ['?from=2026-02-30&to=2026-03-01', 'from', 'date_format'],
      ['?from=2026-10-01&to=2026-10-32', 'to', 'date_format'],
      ['?from=2026-10-02&to=2026-10-01', 'to', 'date_order'],
      ['?from=2999-01-01', 'from', 'date_order'],
      ['?from=2025-01-01&to=2026-01-02', 'to', 'range_too_long'],
    ])('answers 422 for %s', async (query, field, type) => {
      const response = await stats(site, query);
      expect(response.status).toBe(422);
      expect(response.body.detail).toEqual([
        expect.objectContaining({ loc: ['query', field], type, msg: expect.any(String) }),
      ]);
    });

    it('accepts a range of exactly 366 days', async () => {
      const response = await stats(site, '?from=2025-10-08&to=2026-10-08');
      expect(response.status).toBe(200);
      expect(response.body.by_day).toHaveLength(366);
      // Now both payments just outside the week count too: 73000 + 2 × 900000.
      expect(response.body.revenue_amount).toBe('1873000');
    });

    it('answers 404 for another publisher’s site and a malformed id, 401 without a key', async () => {
      const foreign = await stats(site, '', stranger);
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual({ detail: 'Site not found' });
      expect((await app.call('GET', '/v1/sites/not-a-uuid/stats', { headers: owner.auth })).status).toBe(404);
      expect((await app.call('GET', `/v1/sites/${site.siteId}/stats`)).status).toBe(401);
    });
  });

  describe('GET /v1/sites/{site_id}/payments', () => {
    it('pages through the site’s confirmed payments newest first, with the payer', async () => {
      const site = await createSite(app, owner);
      const other = await createSite(app, owner);
      const payer = newAddress();
      const paid = [];
      for (let i = 0; i < 5; i++) {
        paid.push(
          await insertPayment(app, owner, site, {
            payer,
            amount: 1000n + BigInt(i),
            url: `/p${i}`,
            confirmedAt: new Date(Date.parse('2026-10-01T00:00:00Z') + i * 60_000),
          }),
        );
      }
      await insertPayment(app, owner, site, { payer, amount: 1n, status: 'submitted' });
      await insertPayment(app, owner, other, { payer, amount: 1n });

      const { sizes, ids } = await walkPages(app, `/v1/sites/${site.siteId}/payments`, owner.auth, 2);
      expect(sizes).toEqual([2, 2, 1]);
      expect(ids).toEqual(paid.map((p) => p.id).reverse());
      const first = (await app.call('GET', `/v1/sites/${site.siteId}/payments?limit=1`, { headers: owner.auth })).body
        .items[0];
      expect(first).toEqual({
        payment_id: paid[4].id,
        gate_id: paid[4].gateId,
        site_id: site.siteId,
        url: '/p4',
        amount: '1004',
        price_usd: '0.001004',
        tx_hash: paid[4].txHash,
        scheme: 'exact',
        channel_id: null,
        network: 'local',
        paid_at: '2026-10-01T00:04:00.000Z',
        payer,
      });
    });

    it('answers 404 for another publisher’s site and 422 for a bad limit', async () => {
      const site = await createSite(app, owner);
      const foreign = await app.call('GET', `/v1/sites/${site.siteId}/payments`, { headers: stranger.auth });
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual({ detail: 'Site not found' });
      const bad = await app.call('GET', `/v1/sites/${site.siteId}/payments?limit=500`, { headers: owner.auth });
      expect(bad.status).toBe(422);
      expect(bad.body.detail).toEqual([
        expect.objectContaining({ loc: ['query', 'limit'], type: 'less_than_equal', ctx: { le: 100 } }),
      ]);
    });
  });

  it('describes both routes in the OpenAPI document, with the publisher key', async () => {
    const paths = (await app.call('GET', '/v1/openapi.json')).body.paths;
    expect(paths['/v1/sites/{site_id}/stats'].get.security).toEqual([{ bearer: [] }]);
    expect(paths['/v1/sites/{site_id}/payments'].get.responses['200']).toBeDefined();
  });
});
