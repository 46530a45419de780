import { createSite, registerPublisher, type TestPublisher, type TestSite } from '../../test/fixtures';
import { startTestApp, type TestApp } from '../../test/test-app';
import { addGatesCreated, insertPayment, newAddress } from './test-payments';

const at = (iso: string) => new Date(iso);
const RANGE = '?from=2026-10-01&to=2026-10-03';

/*
 * GET /v1/publishers/me/stats: the site stats of every site of the caller, counted over all of
 * them at once (not each site's top ten merged, nor each site's distinct payers added up).
 */
describe('GET /v1/publishers/me/stats', () => {
  let app: TestApp;
  let owner: TestPublisher;
  let stranger: TestPublisher;
  let first: TestSite;
  let second: TestSite;
  const everywhere = newAddress(); // 11th on each site, first over both
  beforeAll(async () => {
    app = await startTestApp();
    owner = await registerPublisher(app);
    stranger = await registerPublisher(app);
    [first, second] = [await createSite(app, owner), await createSite(app, owner)];
    const theirs = await createSite(app, stranger);
    for (const site of [first, second]) {
      const pay = (payer: string, amount: bigint, url: string) =>
        insertPayment(app, owner, site, { payer, amount, url, confirmedAt: at('2026-10-02T12:00:00Z') });
      // Ten agents of its own pay 0.006 on each site: all rank above `everywhere`'s 0.005 there.
      for (let i = 0; i < 10; i++) await pay(newAddress(), 6000n, '/local');
      await pay(everywhere, 5000n, '/shared');
      await addGatesCreated(app, site, '2026-10-02', 30);
    }
    await insertPayment(app, stranger, theirs, {
      payer: everywhere,
      amount: 900_000n,
      url: '/shared',
      confirmedAt: at('2026-10-02T12:00:00Z'),
    });
    await addGatesCreated(app, theirs, '2026-10-02', 500);
  });
  afterAll(() => app.close());

  const stats = (query = RANGE, publisher = owner) =>
    app.call('GET', `/v1/publishers/me/stats${query}`, { headers: publisher.auth });

  it('sums every site of the caller, and only the caller’s', async () => {
    const response = await stats();
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.body).toMatchObject({
      from: '2026-10-01',
      to: '2026-10-03',
      revenue_usd: '0.13',
      revenue_amount: '130000',
      paid_gates: 22,
      gates_created: 60,
      conversion: '0.3667',
      unique_agents: 21, // a wallet paying both sites counts once
    });
    expect(response.body.by_day).toEqual([
      { day: '2026-10-01', revenue_usd: '0', paid_gates: 0, gates_created: 0 },
      { day: '2026-10-02', revenue_usd: '0.13', paid_gates: 22, gates_created: 60 },
      { day: '2026-10-03', revenue_usd: '0', paid_gates: 0, gates_created: 0 },
    ]);
  });

  it('ranks agents over all the sites: one that is 11th on each is first over both', async () => {
    const { body } = await stats();
    expect(body.top_agents).toHaveLength(10);
    expect(body.top_agents[0]).toEqual({ address: everywhere, paid_gates: 2, revenue_usd: '0.01' });
    expect(body.top_agents.slice(1).map((agent: { revenue_usd: string }) => agent.revenue_usd)).toEqual(
      Array(9).fill('0.006'),
    );
  });

  it('ranks paths per site, each named by its site', async () => {
    const { body } = await stats();
    expect(body.top_paths).toEqual(
      expect.arrayContaining([
        { site_id: first.siteId, url: '/local', paid_gates: 10, revenue_usd: '0.06' },
        { site_id: second.siteId, url: '/local', paid_gates: 10, revenue_usd: '0.06' },
        { site_id: first.siteId, url: '/shared', paid_gates: 1, revenue_usd: '0.005' },
        { site_id: second.siteId, url: '/shared', paid_gates: 1, revenue_usd: '0.005' },
      ]),
    );
    expect(body.top_paths).toHaveLength(4);
  });

  it('answers zeros for a publisher without sites, and 422 for a bad range', async () => {
    const lonely = await registerPublisher(app);
    const empty = await stats(RANGE, lonely);
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ revenue_amount: '0', paid_gates: 0, unique_agents: 0, top_paths: [] });
    const backwards = await stats('?from=2026-10-03&to=2026-10-01');
    expect(backwards.status).toBe(422);
    expect(backwards.body.detail).toBeDefined();
  });

  it('needs the publisher’s API key', async () => {
    const response = await app.call('GET', `/v1/publishers/me/stats${RANGE}`);
    expect(response.status).toBe(401);
  });
});
