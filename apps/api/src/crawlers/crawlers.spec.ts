import {
  BOT_CATALOGUE_ENTRIES,
  MAX_CRAWLER_COUNTS_PER_REPORT,
  MAX_CRAWLERS_WITH_TOP_PATHS,
  MAX_UNLISTED_CRAWLERS_IN_VIEW,
  MAX_UNLISTED_CRAWLERS_PER_SITE_DAY,
  MAX_TOP_PATH_LENGTH,
  MAX_TOP_PATHS_PER_CRAWLER,
  MAX_TOP_PATHS_PER_SITE_DAY,
  type SiteCrawlersView,
} from '@crawlgate/core';
import { createSite, registerPublisher, type TestPublisher, type TestSite } from '../../test/fixtures';
import { startTestApp, type TestApp } from '../../test/test-app';
import { insertPayment, newAddress } from '../reporting/test-payments';

const day = (offset: number) => new Date(Date.now() - offset * 86_400_000).toISOString().slice(0, 10);
const count = (crawler: string, action: string, requests: number, extra: Record<string, unknown> = {}) => ({
  day: day(0),
  crawler,
  category: crawler === 'person' ? 'person' : 'ai-training',
  operator: crawler === 'GPTBot' ? 'OpenAI' : null,
  action,
  verified: false,
  requests,
  revenue_micros: '0',
  ...extra,
});

describe('crawler analytics: reported with the gate counts, read per crawler', () => {
  let app: TestApp;
  let owner: TestPublisher;
  let stranger: TestPublisher;
  let site: TestSite;
  beforeAll(async () => {
    app = await startTestApp();
    owner = await registerPublisher(app);
    stranger = await registerPublisher(app);
    site = await createSite(app, owner);
  });
  afterAll(() => app.close());

  const report = (body: Record<string, unknown>, target = site) =>
    app.call('POST', '/v1/site/gate-counts', {
      body: { counts: [], ...body },
      headers: { 'x-site-token': target.siteToken },
    });
  const crawlers = (target = site, query = '', publisher = owner) =>
    app.call('GET', `/v1/sites/${target.siteId}/crawlers${query}`, { headers: publisher.auth });

  /** A confirmed payment of `micros` to `target`: what backs the revenue its middleware reports. */
  const paid = (target: TestSite, micros: bigint, confirmedAt?: Date) =>
    insertPayment(app, owner, target, { payer: newAddress(), amount: micros, confirmedAt });

  it('sums reports per crawler and action, with revenue, verified share and requests per day', async () => {
    const fresh = await createSite(app, owner);
    await paid(fresh, 20_000n);
    expect(
      (
        await report(
          {
            crawlers: [
              count('GPTBot', 'charged', 5),
              count('GPTBot', 'paid', 2, { revenue_micros: '20000' }),
              count('person', 'passed', 40),
            ],
          },
          fresh,
        )
      ).status,
    ).toBe(204);
    expect(
      (
        await report(
          {
            crawlers: [
              count('GPTBot', 'charged', 3, { verified: true }),
              count('GPTBot', 'token', 4),
              count('Bytespider', 'blocked', 7, { day: day(1) }),
            ],
          },
          fresh,
        )
      ).status,
    ).toBe(204);
    // Catalogue names beyond ASCII letters and digits.
    expect(
      (
        await report(
          {
            crawlers: [
              count('Yahoo! Slurp', 'allowed', 1, { category: 'search-engine', operator: 'Yahoo' }),
              count('coccocbot', 'allowed', 1, { category: 'search-engine', operator: 'Cốc Cốc' }),
            ],
          },
          await createSite(app, owner),
        )
      ).status,
    ).toBe(204);

    const response = await crawlers(fresh, `?from=${day(6)}&to=${day(0)}`);
    expect(response.status).toBe(200);
    const view = response.body as SiteCrawlersView;
    expect(view.crawlers.map((c) => c.crawler)).toEqual(['person', 'GPTBot', 'Bytespider']);
    expect(view.crawlers[1]).toEqual({
      crawler: 'GPTBot',
      category: 'ai-training',
      operator: 'OpenAI',
      requests: 14,
      passed: 0,
      allowed: 0,
      blocked: 0,
      charged: 8,
      paid: 2,
      token: 4,
      revenue_usd: '0.02',
      verified_share: '0.2143',
      top_paths: [],
    });
    expect(view.days).toHaveLength(7);
    expect(view.days[6]).toEqual({ day: day(0), passed: 40, allowed: 0, blocked: 0, charged: 8, paid: 2, token: 4 });
    expect(view.days[5]).toEqual({ day: day(1), passed: 0, allowed: 0, blocked: 7, charged: 0, paid: 0, token: 0 });
  });

  it('shows a catalogue crawler in the category the catalogue gives it now, whatever an older middleware reported', async () => {
    const fresh = await createSite(app, owner);
    // Google-InspectionTool was a search engine before 2026-11-29 (allowed by default), and is automation since.
    await report(
      {
        crawlers: [
          count('Google-InspectionTool', 'allowed', 4, { category: 'search-engine', day: day(2) }),
          count('Google-InspectionTool', 'charged', 1, { category: 'automation' }),
          count('unlisted agent', 'charged', 2, { category: 'automation' }),
        ],
      },
      fresh,
    );
    const view = (await crawlers(fresh, `?from=${day(6)}&to=${day(0)}`)).body as SiteCrawlersView;
    expect(view.crawlers.map(({ crawler, category }) => ({ crawler, category }))).toEqual([
      { crawler: 'Google-InspectionTool', category: 'automation' },
      { crawler: 'unlisted agent', category: 'automation' },
    ]);
  });

  it('keeps at most 20 top paths per crawler and day, by requests', async () => {
    const fresh = await createSite(app, owner);
    const paths = Array.from({ length: 30 }, (_, i) => ({
      day: day(0),
      crawler: 'GPTBot',
      path: `/p/${i}`,
      requests: i + 1,
    }));
    expect(
      (await report({ crawlers: [count('GPTBot', 'charged', 465)], paths: paths.slice(0, 15) }, fresh)).status,
    ).toBe(204);
    expect((await report({ paths: paths.slice(15) }, fresh)).status).toBe(204);
    expect(
      (await report({ paths: [{ day: day(0), crawler: 'GPTBot', path: '/p/0', requests: 100 }] }, fresh)).status,
    ).toBe(204);

    const stored = await app.database.prisma.crawlerDailyPath.count({ where: { siteId: fresh.siteId } });
    expect(stored).toBeLessThanOrEqual(MAX_TOP_PATHS_PER_CRAWLER + 1);
    const view = (await crawlers(fresh)).body as SiteCrawlersView;
    const top = view.crawlers[0].top_paths;
    expect(top).toHaveLength(MAX_TOP_PATHS_PER_CRAWLER);
    expect(top[0]).toEqual({ path: '/p/0', requests: 100, verified: false });
    expect(top[1]).toEqual({ path: '/p/29', requests: 30, verified: false });
    expect(top.map((p) => p.requests)).toEqual([...top.map((p) => p.requests)].sort((a, b) => b - a));
  });

  it('keeps at most 500 top paths per site and day in all, the busiest, however many crawlers report them', async () => {
    const fresh = await createSite(app, owner);
    const names = BOT_CATALOGUE_ENTRIES.slice(0, 40).map((entry) => entry.name);
    const paths = names.flatMap((name, i) =>
      Array.from({ length: MAX_TOP_PATHS_PER_CRAWLER }, (_, j) => ({
        day: day(0),
        crawler: name,
        path: `/bot${i}/${j}`,
        requests: i * 100 + j + 1,
      })),
    );
    // In two reports: the second's rows are ranked with the first's.
    for (const half of [paths.slice(0, 400), paths.slice(400)])
      expect(
        (await report({ crawlers: names.map((name) => count(name, 'charged', 1)), paths: half }, fresh)).status,
      ).toBe(204);
    const kept = await app.database.sql.query<{ crawler: string; requests: string }>(
      `SELECT crawler, requests::text FROM crawler_daily_paths WHERE site_id = $1::uuid ORDER BY requests::bigint`,
      [fresh.siteId],
    );
    expect(kept).toHaveLength(MAX_TOP_PATHS_PER_SITE_DAY);
    // The 500 busiest of the 800: every path of the 25 busiest crawlers.
    expect(kept[0]).toEqual({ crawler: names[15], requests: '1501' });
    expect(kept.at(-1)).toEqual({ crawler: names[39], requests: '3920' });
  });

  it('keeps the paths a crawler was verified on apart: strangers claiming its name neither push them out nor outrank them', async () => {
    // Kept by requests alone, one stranger's 402s under GPTBot's name filled its top paths with
    // paths of its choosing, and 26 other catalogue names pushed out verified Googlebot's only path.
    const fresh = await createSite(app, owner);
    const names = BOT_CATALOGUE_ENTRIES.slice(0, 30).map((entry) => entry.name);
    const claimed = names.flatMap((name, i) =>
      Array.from({ length: MAX_TOP_PATHS_PER_CRAWLER }, (_, j) => ({
        day: day(0),
        crawler: name,
        path: `/URGENT-re-enter-your-key/${i}/${j}`,
        requests: 4,
      })),
    );
    const verified = [
      { day: day(0), crawler: names[0], path: '/real-article', requests: 3, verified: true },
      { day: day(0), crawler: names[1], path: '/about', requests: 1, verified: true },
    ];
    const counts = names.map((name) => count(name, 'charged', 80));
    expect((await report({ crawlers: counts, paths: [...verified, ...claimed.slice(0, 300)] }, fresh)).status).toBe(
      204,
    );
    expect((await report({ paths: claimed.slice(300) }, fresh)).status).toBe(204);
    const view = (await crawlers(fresh)).body as SiteCrawlersView;
    const top = (name: string) => view.crawlers.find((c) => c.crawler === name)!.top_paths;
    expect(top(names[0])[0]).toEqual({ path: '/real-article', requests: 3, verified: true });
    expect(top(names[0])[1]).toMatchObject({ requests: 4, verified: false });
    expect(top(names[1])[0]).toEqual({ path: '/about', requests: 1, verified: true });
    // A report from a middleware that says nothing of verification: its paths are taken as unverified.
    expect(
      (await report({ paths: [{ day: day(0), crawler: names[2], path: '/older', requests: 9 }] }, fresh)).status,
    ).toBe(204);
    expect(view.crawlers.length).toBeGreaterThan(0);
    const older = ((await crawlers(fresh)).body as SiteCrawlersView).crawlers.find((c) => c.crawler === names[2])!;
    expect(older.top_paths).toContainEqual({ path: '/older', requests: 9, verified: false });
  });

  it('refuses bad entries with 422 and a detail, and stores nothing of that report', async () => {
    const fresh = await createSite(app, owner);
    const bad = [
      { crawlers: [count('GPTBot', 'stolen', 1)] },
      { crawlers: [count('GPTBot', 'charged', 0)] },
      { crawlers: [count('GPTBot', 'charged', 1.5)] },
      { crawlers: [count('=HYPERLINK("x")', 'charged', 1)] },
      { crawlers: [count('GPT\u0000Bot', 'charged', 1)] },
      // Letters no one sees (Hangul fillers, default-ignorable): "GPTBot" in a spreadsheet, or a blank.
      { crawlers: [count('GPTBot\u3164\u3164', 'charged', 1)] },
      { crawlers: [count('\u115F', 'charged', 1)] },
      { crawlers: [count('SomeBot', 'charged', 1, { category: '\uFFA0ai-search' })] },
      { crawlers: [count('SomeBot', 'charged', 1, { operator: 'Open\u1160AI' })] },
      { crawlers: [count('x'.repeat(65), 'charged', 1)] },
      { crawlers: [count('GPTBot', 'paid', 1, { revenue_micros: '-5' })] },
      { crawlers: [count('GPTBot', 'paid', 1, { revenue_micros: 5 })] },
      // More than a page can cost (1 USD) for each request counted.
      { crawlers: [count('GPTBot', 'paid', 1, { revenue_micros: '1000001' })] },
      { crawlers: [count('GPTBot', 'paid', 9, { revenue_micros: '999999999999999999' })] },
      // Revenue is what paid requests brought: on any other action it is no report of ours.
      { crawlers: [count('GPTBot', 'blocked', 1, { revenue_micros: '5' })] },
      { crawlers: [count('GPTBot', 'charged', 2, { revenue_micros: '1' })] },
      { crawlers: [count('person', 'passed', 1, { revenue_micros: '1' })] },
      { crawlers: [count('GPTBot', 'charged', 1, { day: day(3) })] },
      { crawlers: [count('GPTBot', 'charged', 1, { verified: 'yes' })] },
      { crawlers: Array(MAX_CRAWLER_COUNTS_PER_REPORT + 1).fill(count('GPTBot', 'charged', 1)) },
      { paths: [{ day: day(0), crawler: 'GPTBot', path: 'no-slash', requests: 1 }] },
      // Longer than a top path is listed (the middleware counts such a request, and lists it not).
      { paths: [{ day: day(0), crawler: 'GPTBot', path: `/${'a'.repeat(MAX_TOP_PATH_LENGTH)}`, requests: 1 }] },
      { paths: [{ day: day(0), crawler: 'GPTBot', path: '/a', requests: 1 }], counts: [{ day: day(9), gates: 1 }] },
      // A list where an entry should be: its items were validated, and the list read as an entry.
      { crawlers: [[]] },
      { crawlers: [[count('GPTBot', 'charged', 1)]] },
      { paths: [[{ day: day(0), crawler: 'GPTBot', path: '/a', requests: 1 }]] },
      { counts: [[{ day: day(0), gates: 1 }]] },
      { crawlers: ['GPTBot'] },
    ];
    for (const body of bad) {
      const response = await report({ counts: [{ day: day(0), gates: 1 }], ...body }, fresh);
      expect({
        body: JSON.stringify(body).slice(0, 80),
        status: response.status,
        detail: response.body.detail !== undefined,
      }).toEqual({ body: JSON.stringify(body).slice(0, 80), status: 422, detail: true });
    }
    expect(await app.database.prisma.crawlerDailyCount.count({ where: { siteId: fresh.siteId } })).toBe(0);
    expect(await app.database.prisma.crawlerDailyPath.count({ where: { siteId: fresh.siteId } })).toBe(0);
    expect(await app.database.prisma.siteDailyCount.count({ where: { siteId: fresh.siteId } })).toBe(0);
  });

  it('saturates totals no column can hold, never answers 500, and writes a report whole', async () => {
    const fresh = await createSite(app, owner);
    // Each entry within bounds (a billion requests at 1 USD); ten reports pass bigint's range.
    const most = count('GPTBot', 'paid', 1_000_000_000, { revenue_micros: String(1_000_000_000 * 1_000_000) });
    for (let sent = 0; sent < 10; sent++)
      expect((await report({ crawlers: Array(MAX_CRAWLER_COUNTS_PER_REPORT).fill(most) }, fresh)).status).toBe(204);
    const [stored] = await app.database.sql.query<{ revenue: string }>(
      `SELECT revenue_micros::text AS revenue FROM crawler_daily_counts WHERE site_id = $1::uuid`,
      [fresh.siteId],
    );
    expect(stored.revenue).toBe('9223372036854775807');
    // Gate counts near the top of their column: held at its largest value.
    await app.database.prisma.siteDailyCount.create({
      data: { siteId: fresh.siteId, day: new Date(`${day(0)}T00:00:00Z`), gatesCreated: 2_147_000_000 },
    });
    expect((await report({ counts: [{ day: day(0), gates: 1_000_000 }] }, fresh)).status).toBe(204);
    const gates = await app.database.prisma.siteDailyCount.findFirstOrThrow({ where: { siteId: fresh.siteId } });
    expect(gates.gatesCreated).toBe(2_147_483_647);
    expect((await crawlers(fresh)).status).toBe(200);
  });

  it(`keeps at most ${MAX_UNLISTED_CRAWLERS_PER_SITE_DAY} names outside the catalogue per site and day: further ones are counted as "other crawlers"`, async () => {
    const fresh = await createSite(app, owner);
    const known = ['GPTBot', 'ClaudeBot', 'person', 'unknown-crawler', 'unknown-automation', 'unlisted agent'];
    for (let batch = 0; batch < 3; batch++) {
      const names = [...Array.from({ length: 30 }, (_, i) => `Bot${batch}x${i}`), ...known];
      const response = await report(
        {
          crawlers: names.map((name) => count(name, 'charged', 1)),
          paths: names.map((name) => ({ day: day(0), crawler: name, path: '/a', requests: 1 })),
        },
        fresh,
      );
      expect(response.status).toBe(204);
    }
    const names = await app.database.sql.query<{ crawler: string }>(
      `SELECT DISTINCT crawler FROM crawler_daily_counts WHERE site_id = $1::uuid`,
      [fresh.siteId],
    );
    // The catalogue's names and the middleware's groups are never folded, whatever came before them.
    expect(names).toHaveLength(MAX_UNLISTED_CRAWLERS_PER_SITE_DAY + 1 + known.length);
    const view = (await crawlers(fresh)).body as SiteCrawlersView;
    const requestsOf = (name: string) => view.crawlers.find((crawler) => crawler.crawler === name)?.requests;
    expect(requestsOf('other crawlers')).toBe(90 - MAX_UNLISTED_CRAWLERS_PER_SITE_DAY);
    for (const name of known) expect({ name, requests: requestsOf(name) }).toEqual({ name, requests: 3 });
    expect(view.crawlers.reduce((sum, crawler) => sum + crawler.requests, 0)).toBe(3 * (30 + known.length));
    const pathNames = await app.database.sql.query<{ crawler: string }>(
      `SELECT DISTINCT crawler FROM crawler_daily_paths WHERE site_id = $1::uuid`,
      [fresh.siteId],
    );
    expect(pathNames.length).toBeLessThanOrEqual(MAX_TOP_PATHS_PER_SITE_DAY);
  });

  it(`shows at most ${MAX_UNLISTED_CRAWLERS_IN_VIEW} names outside the catalogue over a range, and top paths for its ${MAX_CRAWLERS_WITH_TOP_PATHS} busiest crawlers`, async () => {
    // Twenty made-up names a day, kept a year, made a view of 7,500 crawlers and 146,500 top paths
    // (275 MB, 16 s of the API's thread, every publisher's requests waiting behind it).
    const fresh = await createSite(app, owner);
    const catalogue = BOT_CATALOGUE_ENTRIES.slice(0, 30).map((entry) => entry.name);
    for (let offset = 0; offset < 3; offset++) {
      // Each day's own made-up names; on the first, name i is asked 100 + i times.
      const made = Array.from(
        { length: MAX_UNLISTED_CRAWLERS_PER_SITE_DAY },
        (_, i) => [`Made${offset}x${i}`, 100 - offset * 30 + i] as const,
      );
      const named = [...made, ...catalogue.map((name, i) => [name, 1 + i + offset] as const)];
      const response = await report(
        {
          crawlers: named.map(([name, requests]) =>
            count(name, 'charged', requests, { day: day(offset), category: 'automation', operator: null }),
          ),
          paths: named.map(([name, requests], i) => ({ day: day(offset), crawler: name, path: `/page${i}`, requests })),
        },
        fresh,
      );
      expect({ status: response.status, body: response.body }).toEqual({ status: 204, body: undefined });
    }
    const view = (await crawlers(fresh, `?from=${day(2)}&to=${day(0)}`)).body as SiteCrawlersView;
    const unlisted = view.crawlers.filter((crawler) => crawler.crawler.startsWith('Made'));
    expect(unlisted).toHaveLength(MAX_UNLISTED_CRAWLERS_IN_VIEW);
    // The busiest are kept; the rest are summed as "other crawlers", nothing lost.
    const folded = 3 * MAX_UNLISTED_CRAWLERS_PER_SITE_DAY - MAX_UNLISTED_CRAWLERS_IN_VIEW;
    const allMade = [0, 1, 2].flatMap((offset) =>
      Array.from({ length: MAX_UNLISTED_CRAWLERS_PER_SITE_DAY }, (_, i) => 100 - offset * 30 + i),
    );
    const quietest = [...allMade].sort((a, b) => a - b).slice(0, folded);
    const other = view.crawlers.find((crawler) => crawler.crawler === 'other crawlers');
    expect(other).toMatchObject({ requests: quietest.reduce((sum, n) => sum + n, 0), verified_share: '0.0000' });
    expect(Math.min(...unlisted.map((crawler) => crawler.requests))).toBeGreaterThanOrEqual(Math.max(...quietest));
    for (const name of catalogue) expect(view.crawlers.some((crawler) => crawler.crawler === name)).toBe(true);
    const total = allMade.reduce((sum, n) => sum + n, 0) + catalogue.reduce((sum, _, i) => sum + 3 * (2 + i), 0);
    expect(view.crawlers.reduce((sum, crawler) => sum + crawler.requests, 0)).toBe(total);
    // Top paths for the busiest crawlers only, in the view's order.
    const withPaths = view.crawlers.filter((crawler) => crawler.top_paths.length > 0);
    expect(withPaths).toEqual(
      view.crawlers.slice(0, MAX_CRAWLERS_WITH_TOP_PATHS).filter((crawler) => crawler.crawler !== 'other crawlers'),
    );
    expect(withPaths.length).toBeGreaterThan(0);
    // The CSV has every crawler of the view.
    const csv = await app.call('GET', `/v1/sites/${fresh.siteId}/crawlers.csv?from=${day(2)}&to=${day(0)}`, {
      headers: owner.auth,
    });
    expect(String(csv.body).trimEnd().split('\r\n')).toHaveLength(1 + view.crawlers.length);
  });

  it('takes a top path of at most 256 UTF-16 code units, as the middleware counts them: a pair is two, a variation selector one', async () => {
    // The validator's length counted a surrogate pair as one and dropped variation selectors: 1,786 bytes passed.
    const fresh = await createSite(app, owner);
    const pair = '\u{21000}\uFE0F'; // three code units, counted as one
    const entry = (path: string) => ({ paths: [{ day: day(0), crawler: 'GPTBot', path, requests: 1 }] });
    expect((await report(entry(`/${pair.repeat(85)}`), fresh)).status).toBe(204); // 256 units
    expect((await report(entry(`/${pair.repeat(85)}a`), fresh)).status).toBe(422);
    expect((await report(entry(`/${pair.repeat(255)}`), fresh)).status).toBe(422);
    const [{ longest }] = await app.database.sql.query<{ longest: number }>(
      `SELECT max(length(path))::int AS longest FROM crawler_daily_paths WHERE site_id = $1::uuid`,
      [fresh.siteId],
    );
    expect(longest).toBeLessThanOrEqual(MAX_TOP_PATH_LENGTH);
  });

  it("spells a known crawler as the catalogue does, whatever case, width or spacing a report used, with the catalogue's operator and category", async () => {
    const fresh = await createSite(app, owner);
    const response = await report(
      {
        crawlers: [
          count('gptbot', 'charged', 1, { operator: 'Somebody Else', category: 'search-engine' }),
          count('GPTBot ', 'charged', 1),
          count('\uff27\uff30\uff34\uff22\uff4f\uff54', 'charged', 1), // full-width letters
          count('GPTBot', 'charged', 1, { operator: null }),
          count('Unknown-Automation', 'charged', 2, { category: 'automation' }),
          count('OTHER  crawlers', 'charged', 1, { category: 'automation' }),
          count('Person', 'passed', 5, { category: 'person', operator: 'OpenAI' }),
        ],
        paths: [
          { day: day(0), crawler: 'GPTBOT', path: '/x', requests: 2 },
          { day: day(0), crawler: 'gptbot', path: '/x', requests: 1 },
        ],
      },
      fresh,
    );
    expect(response.status).toBe(204);
    const stored = await app.database.sql.query<{
      crawler: string;
      category: string;
      operator: string | null;
      requests: string;
    }>(
      `SELECT crawler, category, operator, requests::text FROM crawler_daily_counts WHERE site_id = $1::uuid ORDER BY crawler`,
      [fresh.siteId],
    );
    expect(stored).toEqual([
      { crawler: 'GPTBot', category: 'ai-training', operator: 'OpenAI', requests: '4' },
      { crawler: 'other crawlers', category: 'other crawlers', operator: null, requests: '1' },
      { crawler: 'person', category: 'person', operator: null, requests: '5' },
      { crawler: 'unknown-automation', category: 'automation', operator: null, requests: '2' },
    ]);
    const view = (await crawlers(fresh)).body as SiteCrawlersView;
    expect(view.crawlers.find((crawler) => crawler.crawler === 'GPTBot')?.top_paths).toEqual([
      { path: '/x', requests: 3, verified: false },
    ]);
  });

  it('takes concurrent reports of one site whole, whatever order they name its rows in, and keeps the cap', async () => {
    const fresh = await createSite(app, owner);
    const names = BOT_CATALOGUE_ENTRIES.slice(0, 40).map((entry) => entry.name);
    const rows = names.flatMap((name) => [count(name, 'charged', 1), count(name, 'paid', 1)]);
    // Every report names the same rows, each in an order of its own: row locks taken in different orders.
    const reports = Array.from({ length: 20 }, (_, i) => {
      const turned = [...rows.slice((i * 7) % rows.length), ...rows.slice(0, (i * 7) % rows.length)];
      return report(
        {
          counts: [{ day: day(0), gates: 1 }],
          crawlers: i % 2 ? turned.reverse() : turned,
          paths: names.map((name) => ({ day: day(0), crawler: name, path: `/p${i % 3}`, requests: 1 })),
        },
        fresh,
      );
    });
    expect((await Promise.all(reports)).map((response) => response.status)).toEqual(Array(20).fill(204));
    const [totals] = await app.database.sql.query<{ requests: string; rows: string }>(
      `SELECT SUM(requests)::text AS requests, COUNT(*)::text AS rows FROM crawler_daily_counts WHERE site_id = $1::uuid`,
      [fresh.siteId],
    );
    expect(totals).toEqual({ requests: String(20 * rows.length), rows: String(rows.length) });
    const gates = await app.database.prisma.siteDailyCount.findFirstOrThrow({ where: { siteId: fresh.siteId } });
    expect(gates.gatesCreated).toBe(20);

    // Two reports of 300 new names each, at once: the cap's names kept, not more.
    const capped = await createSite(app, owner);
    const both = [0, 1].map((batch) =>
      report({ crawlers: Array.from({ length: 300 }, (_, i) => count(`Racer${batch}x${i}`, 'charged', 1)) }, capped),
    );
    expect((await Promise.all(both)).map((response) => response.status)).toEqual([204, 204]);
    const kept = await app.database.sql.query<{ crawler: string }>(
      `SELECT DISTINCT crawler FROM crawler_daily_counts WHERE site_id = $1::uuid`,
      [capped.siteId],
    );
    expect(kept).toHaveLength(MAX_UNLISTED_CRAWLERS_PER_SITE_DAY + 1);
  });

  it('shows no revenue that no confirmed payment backs: $1,000,000 reported for a site never paid shows as 0, in the JSON and the CSV', async () => {
    const fresh = await createSite(app, owner);
    // A million GPTBot requests at 1 USD each: within a report's bounds, and no payment behind any of it.
    const forged = count('GPTBot', 'paid', 1_000_000, { verified: true, revenue_micros: '1000000000000' });
    expect((await report({ crawlers: [forged] }, fresh)).status).toBe(204);
    const view = (await crawlers(fresh)).body as SiteCrawlersView;
    expect(view.crawlers.map(({ crawler, paid, revenue_usd }) => ({ crawler, paid, revenue_usd }))).toEqual([
      { crawler: 'GPTBot', paid: 1_000_000, revenue_usd: '0' },
    ]);
    const csv = await app.call('GET', `/v1/sites/${fresh.siteId}/crawlers.csv`, { headers: owner.auth });
    expect(csv.body).toContain('\r\nGPTBot,ai-training,OpenAI,1000000,0,0,0,0,1000000,0,0,1.0000\r\n');
  });

  it("shows reported revenue as reported while the range's confirmed payments cover it, else each crawler's scaled down to them", async () => {
    const honest = await createSite(app, owner);
    await paid(honest, 30_000n);
    await report(
      {
        crawlers: [
          count('GPTBot', 'paid', 2, { revenue_micros: '20000' }),
          count('ClaudeBot', 'paid', 1, { revenue_micros: '10000' }),
        ],
      },
      honest,
    );
    const revenues = async (target: TestSite) =>
      Object.fromEntries(
        ((await crawlers(target, `?from=${day(6)}&to=${day(0)}`)).body as SiteCrawlersView).crawlers.map((c) => [
          c.crawler,
          c.revenue_usd,
        ]),
      );
    expect(await revenues(honest)).toEqual({ GPTBot: '0.02', ClaudeBot: '0.01' });

    // The same report with 0.01 USD confirmed in the range: a third of each, rounded down, never more in all.
    const overstated = await createSite(app, owner);
    await paid(overstated, 10_000n);
    await paid(overstated, 50_000n, new Date(`${day(7)}T23:59:59Z`)); // the day before the range
    await paid(honest, 50_000n); // another site's
    await report(
      {
        crawlers: [
          count('GPTBot', 'paid', 2, { revenue_micros: '20000' }),
          count('ClaudeBot', 'paid', 1, { revenue_micros: '10000' }),
        ],
      },
      overstated,
    );
    expect(await revenues(overstated)).toEqual({ GPTBot: '0.006666', ClaudeBot: '0.003333' });
  });

  it('shows a name outside the catalogue (a look-alike of GPTBot) with no operator and none of its requests verified', async () => {
    const fresh = await createSite(app, owner);
    const lookalike = 'GPTB\u03bft'; // a Greek omicron for the "o": a name of its own (reported-names.spec.ts)
    const claimed = { operator: 'OpenAI', verified: true };
    expect(
      (
        await report(
          {
            crawlers: [
              count(lookalike, 'allowed', 500, claimed),
              count('GPTBot', 'allowed', 3, claimed),
              // The middleware's own group of agents it verified but cannot name keeps its verification.
              count('unknown-automation', 'allowed', 2, { category: 'automation', verified: true }),
              // The API's own group of the names over the cap: outside the catalogue all the same.
              count('other crawlers', 'allowed', 4, { category: 'other crawlers', verified: true }),
            ],
            paths: [{ day: day(0), crawler: lookalike, path: '/a', requests: 5, verified: true }],
          },
          fresh,
        )
      ).status,
    ).toBe(204);
    const view = (await crawlers(fresh)).body as SiteCrawlersView;
    expect(
      view.crawlers.map(({ crawler, operator, verified_share, top_paths }) => ({
        crawler,
        operator,
        verified_share,
        top_paths,
      })),
    ).toEqual([
      {
        crawler: lookalike,
        operator: null,
        verified_share: '0.0000',
        top_paths: [{ path: '/a', requests: 5, verified: false }],
      },
      { crawler: 'other crawlers', operator: null, verified_share: '0.0000', top_paths: [] },
      { crawler: 'GPTBot', operator: 'OpenAI', verified_share: '1.0000', top_paths: [] },
      { crawler: 'unknown-automation', operator: null, verified_share: '1.0000', top_paths: [] },
    ]);
  });

  it('shows a site only to its publisher (404 otherwise) and needs the site token to report', async () => {
    expect((await crawlers(site, '', stranger)).status).toBe(404);
    expect((await app.call('GET', `/v1/sites/${site.siteId}/crawlers`)).status).toBe(401);
    expect(
      (
        await app.call('POST', '/v1/site/gate-counts', {
          body: { counts: [], crawlers: [count('GPTBot', 'charged', 1)] },
        })
      ).status,
    ).toBe(401);
    expect((await crawlers(site, '?from=2026-13-01')).status).toBe(422);
  });

  it('exports the table as CSV, one row per crawler', async () => {
    const fresh = await createSite(app, owner);
    await paid(fresh, 20_000n);
    await report(
      {
        crawlers: [
          count('GPTBot', 'paid', 2, { revenue_micros: '20000', verified: true }),
          count('person', 'passed', 3),
        ],
      },
      fresh,
    );
    const response = await app.call('GET', `/v1/sites/${fresh.siteId}/crawlers.csv`, { headers: owner.auth });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="crawlers.csv"');
    expect(response.body).toBe(
      'crawler,category,operator,requests,passed,allowed,blocked,charged,paid,token,revenue_usd,verified_share\r\n' +
        'person,person,,3,3,0,0,0,0,0,0,0.0000\r\n' +
        'GPTBot,ai-training,OpenAI,2,0,0,0,0,2,0,0.02,1.0000\r\n',
    );
    expect((await app.call('GET', `/v1/sites/${fresh.siteId}/crawlers.csv`, { headers: stranger.auth })).status).toBe(
      404,
    );
  });
});
