import { decodeBase64Json } from '@crawlgate/core';
import {
  createSite,
  namePayoutAddress,
  openGate,
  pricedSite,
  registerPublisher,
  type TestSite,
} from '../../test/fixtures';
import { newWallet } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { readGate, signGate, type GateTerms } from '@crawlgate/core';
import { GateCounterService } from './gate-counter.service';

describe('gates API', () => {
  let app: TestApp;
  let site: TestSite;
  // Its key signs each publisher's proof: several publishers here name this one address.
  const payee = newWallet();
  const payTo = payee.address;
  beforeAll(async () => {
    app = await startTestApp();
    ({ site } = await pricedSite(app, payee));
  });
  afterAll(() => app.close());

  const create = (url: unknown, token = site.siteToken) =>
    app.call('POST', '/v1/gates', { body: { url }, headers: { 'x-site-token': token } });

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
      accepts: [
        {
          scheme: 'exact',
          network: 'eip155:31337',
          amount: '10000',
          asset: app.chain.usdc,
          payTo,
          extra: { name: 'USD Coin', version: '2' },
        },
      ],
    });
  });

  /** Rows of every table of ours, counted. */
  async function rowCounts(): Promise<Record<string, number>> {
    const tables = await app.database.sql.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`,
    );
    const counts: Record<string, number> = {};
    for (const { table_name } of tables)
      counts[table_name] = Number(
        (await app.database.sql.query<{ n: string }>(`SELECT COUNT(*) AS n FROM "${table_name}"`))[0].n,
      );
    return counts;
  }

  it('answers a free path with 200 and stores nothing', async () => {
    const before = await rowCounts();
    const response = await create('/free/post');
    expect(response).toMatchObject({ status: 200, body: { status: 'free', price_usd: '0', url: '/free/post' } });
    expect(await rowCounts()).toEqual(before);
  });

  it('writes no row for a gate: it is a signed offer, counted in memory and written in batches', async () => {
    const counter = app.app.get(GateCounterService);
    await counter.flush();
    const before = await rowCounts();
    const gates = await Promise.all(Array.from({ length: 20 }, (_, i) => create(`/no-row/${i}`)));
    expect(gates.map((g) => g.status)).toEqual(gates.map(() => 402));
    expect(await rowCounts()).toEqual(before);
    await counter.flush();
    const today = new Date().toISOString().slice(0, 10);
    const counted = await app.database.prisma.siteDailyCount.findUnique({
      where: { siteId_day: { siteId: site.siteId, day: new Date(today) } },
    });
    expect(counted?.gatesCreated).toBeGreaterThanOrEqual(20);
  });

  it('answers 422 for an absolute URL no URL parser reads, and counts no gate for it (helper-363)', async () => {
    const counter = app.app.get(GateCounterService);
    await counter.flush();
    const today = new Date().toISOString().slice(0, 10);
    const counted = async () =>
      (
        await app.database.prisma.siteDailyCount.findUnique({
          where: { siteId_day: { siteId: site.siteId, day: new Date(today) } },
        })
      )?.gatesCreated ?? 0;
    const before = await counted();
    for (const url of ['https://example.com:99999/a', 'http://[::1', 'http://exa%zzmple.com/a', 'http://a:b/x']) {
      const response = await create(url);
      expect([url, response.status, response.body.detail?.[0]?.loc]).toEqual([url, 422, ['body', 'url']]);
    }
    await counter.flush();
    expect(await counted()).toBe(before);
  });

  it('prices by the site’s rules and follows pricing changes at once', async () => {
    expect((await create('/cheap/a')).body.price_usd).toBe('0.001');
    const publisher = await registerPublisher(app);
    const other = await createSite(app, publisher);
    await namePayoutAddress(app, publisher, payee);
    await app.call('PUT', `/v1/sites/${other.siteId}/pricing`, {
      body: { default_price_usd: '0.5' },
      headers: publisher.auth,
    });
    expect((await create('/x', other.siteToken)).body.price_usd).toBe('0.5');
    await app.call('PUT', `/v1/sites/${other.siteId}/pricing`, {
      body: { default_price_usd: '0.25' },
      headers: publisher.auth,
    });
    expect((await create('/x', other.siteToken)).body.price_usd).toBe('0.25');
  });

  it('answers 409 when the publisher has no payout address', async () => {
    const publisher = await registerPublisher(app);
    const unpaid = await createSite(app, publisher);
    await app.call('PUT', `/v1/sites/${unpaid.siteId}/pricing`, {
      body: { default_price_usd: '0.01' },
      headers: publisher.auth,
    });
    const response = await create('/a', unpaid.siteToken);
    expect(response.status).toBe(409);
    expect(response.body.detail).toMatch(/payout address/);
  });

  it.each([[''], ['no-slash'], ['ftp://x/y'], ['/has space'], [42], [null], ['/' + 'a'.repeat(2048)]])(
    'answers 422 for the url #%#',
    async (url) => {
      const response = await create(url);
      expect(response.status).toBe(422);
      expect(response.body.detail[0].loc).toEqual(['body', 'url']);
    },
  );

  it('answers 414 for a path whose access token could not carry it (wide characters weigh three bytes each)', async () => {
    const response = await create('/' + '一'.repeat(1050));
    expect(response.status).toBe(414);
    expect(response.body.detail).toMatch(/2048 bytes/);
    // Within the bound, as many wide characters as fit are gated.
    expect((await create('/' + '一'.repeat(600))).status).toBe(402);
  });

  it('prices a spelling a lenient router serves as a priced route at that route’s price, as the middleware does', async () => {
    const premium = await pricedSite(app, payee);
    await app.call('PUT', `/v1/sites/${premium.site.siteId}/pricing`, {
      body: {
        default_price_usd: '0.01',
        rules: [
          { path: '/premium/*', price_usd: '0.5' },
          { path: '/kiosk/[!A-Z]*', price_usd: '0.5' }, // /KIOSK/dog reaches /kiosk/dog, which it prices
        ],
      },
      headers: premium.publisher.auth,
    });
    for (const url of [
      '/premium/a',
      '/PREMIUM/a',
      '/Premium/a',
      '/premium/a/',
      '/kiosk/dog',
      '/KIOSK/dog',
      '/Kiosk/Dog',
    ]) {
      const response = await create(url, premium.site.siteToken);
      expect({ url, status: response.status, price: response.body.price_usd }).toEqual({
        url,
        status: 402,
        price: '0.5',
      });
    }
  });

  it('prices what a router may serve as a priced route (";" cut, escaped slash, dot segments) as the middleware does, never free', async () => {
    // A free default, so a target read as another path than the router serves would be given away.
    const premium = await pricedSite(app, payee);
    await app.call('PUT', `/v1/sites/${premium.site.siteId}/pricing`, {
      body: {
        default_price_usd: '0',
        rules: [
          { path: '/premium/*', price_usd: '0.05' },
          { path: '/report', price_usd: '0.5' },
        ],
      },
      headers: premium.publisher.auth,
    });
    for (const [url, price] of [
      ['/premium;jsessionid=x/42', '0.05'], // Tomcat and Spring serve /premium/42
      ['/report;x', '0.5'], // Fastify's useSemicolonDelimiter serves /report
      ['/premium%2F42', '0.05'], // express.static serves premium/42
      ['/premium%3Bx/42', '0.05'], // decoded by a proxy, then each segment's ";…" dropped (Tomcat, Spring)
      ['/report%3Bx', '0.5'], // a decoding proxy in front makes it "/report;x"
      ['/premium%2F42;x', '0.05'],
      ['/premium/42/%2e%2e/%2e%2e/about', '0.5'], // routers disagree: the site's highest price
      ['/premium/42/../../about', '0.5'],
      ['/about\\..\\premium\\42', '0.5'],
    ]) {
      const response = await create(url, premium.site.siteToken);
      expect({ url, status: response.status, price: response.body.price_usd }).toEqual({ url, status: 402, price });
    }
    expect((await create('/about', premium.site.siteToken)).status).toBe(200);
  });

  it('answers 401 without a valid site token', async () => {
    expect((await app.call('POST', '/v1/gates', { body: { url: '/a' } })).status).toBe(401);
    expect((await create('/a', `st_${'A'.repeat(43)}`)).status).toBe(401);
  });

  it('shows a gate by id, whoever minted it: the API, or the middleware with the site’s secret', async () => {
    const gate = await openGate(app, site, '/status/1');
    const shown = await app.call('GET', `/v1/gates/${gate.id}`);
    // Its status changes as it is paid: no cache may keep an answer.
    expect(shown.headers.get('cache-control')).toBe('no-store');
    expect(shown).toMatchObject({
      status: 200,
      body: {
        id: gate.id,
        ref: gate.ref,
        url: '/status/1',
        status: 'open',
        price_usd: '0.01',
        paid_at: null,
        tx_hash: null,
      },
    });

    const minted = signGate(
      { ...readGate(gate.id)!, ref: crypto.randomUUID(), path: '/minted/elsewhere' },
      site.secret,
    );
    expect(await app.call('GET', `/v1/gates/${minted}`)).toMatchObject({
      status: 200,
      body: { id: minted, url: '/minted/elsewhere', status: 'open' },
    });
  });

  it('reports forged, tampered, expired, other-site, other-chain and unknown gates as 404 "Gate not found or expired", on read and on pay', async () => {
    const gate = await openGate(app, site, '/status/2');
    const terms = readGate(gate.id)!;
    const now = Math.floor(Date.now() / 1000);
    const other = await createSite(app, await registerPublisher(app));
    const [, segment, mac] = gate.id.split('.');
    const tampered = `g1.${Buffer.from(Buffer.from(segment, 'base64url').toString().replace('/status/2', '/status/3')).toString('base64url')}.${mac}`;
    const cases: [string, string][] = [
      ['forged with another secret', signGate(terms, `cgsec_${'x'.repeat(43)}`)],
      ['tampered path', tampered],
      ['expired', signGate({ ...terms, iat: now - 1000, exp: now - 1 }, site.secret)],
      ['another site’s id under this secret', signGate({ ...terms, siteId: other.siteId }, site.secret)],
      ['another chain', signGate({ ...terms, chainId: 1 } as GateTerms, site.secret)],
      ['unknown', '00000000-0000-0000-0000-000000000000'],
      ['not a gate', 'not-a-gate'],
    ];
    for (const [name, id] of cases) {
      const read = await app.call('GET', `/v1/gates/${encodeURIComponent(id)}`);
      const pay = await app.call('POST', `/v1/gates/${encodeURIComponent(id)}/verify`, {
        body: { payment: { x402Version: 1 } },
      });
      const proof = await app.call('POST', `/v1/gates/${encodeURIComponent(id)}/verify`, {
        body: { tx_hash: `0x${'1'.repeat(64)}` },
      });
      expect({
        name,
        read: [read.status, read.body.detail],
        pay: [pay.status, pay.body.detail],
        proof: [proof.status, proof.body.detail],
      }).toEqual({
        name,
        read: [404, 'Gate not found or expired'],
        pay: [404, 'Gate not found or expired'],
        // An expired gate's transfer proof is judged by when its transfer was mined (transfer-after-expiry.spec.ts).
        proof:
          name === 'expired'
            ? [402, `Transaction 0x${'1'.repeat(64)} is not known on local`]
            : [404, 'Gate not found or expired'],
      });
    }
  });

  it('takes the middleware’s batched gate counts for today and the two days before, and refuses others with 422', async () => {
    const publisher = await registerPublisher(app);
    const counted = await createSite(app, publisher);
    const day = (offset: number) => new Date(Date.now() - offset * 86_400_000).toISOString().slice(0, 10);
    const report = (counts: unknown) =>
      app.call('POST', '/v1/site/gate-counts', { body: { counts }, headers: { 'x-site-token': counted.siteToken } });
    expect(
      (
        await report([
          { day: day(0), gates: 5 },
          { day: day(0), gates: 2 },
          { day: day(2), gates: 1 },
        ])
      ).status,
    ).toBe(204);
    expect((await report([{ day: day(0), gates: 3 }])).status).toBe(204);
    for (const bad of [
      [{ day: day(3), gates: 1 }],
      [{ day: day(-2), gates: 1 }], // tomorrow only near midnight: reportable-day.spec.ts
      [{ day: '2026-02-30', gates: 1 }],
      [{ day: day(0), gates: 0 }],
      [{ day: day(0), gates: 1.5 }],
      Array(4).fill({ day: day(0), gates: 1 }),
    ]) {
      const response = await report(bad);
      expect({ bad, status: response.status, detail: Array.isArray(response.body.detail) }).toEqual({
        bad,
        status: 422,
        detail: true,
      });
    }
    expect((await app.call('POST', '/v1/site/gate-counts', { body: { counts: [] } })).status).toBe(401);
    const rows = await app.database.prisma.siteDailyCount.findMany({
      where: { siteId: counted.siteId },
      orderBy: { day: 'asc' },
    });
    expect(rows.map((row) => [row.day.toISOString().slice(0, 10), row.gatesCreated])).toEqual([
      [day(2), 1],
      [day(0), 10],
    ]);
  });

  it('limits gate creation to 200 a minute per site token', async () => {
    const publisher = await registerPublisher(app);
    const busy = await createSite(app, publisher);
    const statuses = await Promise.all(
      Array.from({ length: 201 }, () => create('/free-for-all', busy.siteToken).then((r) => r.status)),
    );
    expect(statuses.filter((status) => status === 429)).toHaveLength(1);
    expect(statuses.filter((status) => status === 200)).toHaveLength(200);
  });
});
