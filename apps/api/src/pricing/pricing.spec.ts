import {
  globSteps,
  MAX_PRICING_STEPS,
  MAX_SITE_PRICES_HEAP_BYTES,
  priceOfSpelling,
  readRoute,
  BOT_CATEGORIES,
  DEFAULT_CATEGORY_ACTIONS,
  DEFAULT_CATEGORY_ACTIONS_VERSION,
  secretFingerprint,
} from '@crawlgate/core';
import { createSite, registerPublisher, type TestPublisher, type TestSite } from '../../test/fixtures';
import { startTestApp, type TestApp } from '../../test/test-app';
import { CompileBudget } from './compile-budget';
import { MAX_CACHED_PRICE_BYTES, PricingService } from './pricing.service';

describe('pricing API', () => {
  let app: TestApp;
  let publisher: TestPublisher;
  let site: TestSite;
  beforeAll(async () => {
    app = await startTestApp();
    publisher = await registerPublisher(app);
    site = await createSite(app, publisher);
  });
  afterAll(() => app.close());

  const put = (body: unknown, target = site) =>
    app.call('PUT', `/v1/sites/${target.siteId}/pricing`, { body, headers: publisher.auth });
  const resolve = async (path: string) =>
    (
      await app.call('GET', `/v1/sites/${site.siteId}/pricing/resolve?path=${encodeURIComponent(path)}`, {
        headers: publisher.auth,
      })
    ).body;

  it('takes concurrent replacements one after the other: each answered 200, the stored pricing exactly one of them', async () => {
    // On PostgreSQL, a replacement that deleted the rules before another's were written left that
    // other's rules under its own default, or failed on their positions (a 500).
    const owner = await registerPublisher(app);
    const target = await createSite(app, owner);
    const bodies = Array.from({ length: 8 }, (_, i) => ({
      default_price_usd: `0.0${i + 1}`,
      rules: Array.from({ length: i % 2 ? 0 : 3 + i }, (_, k) => ({ path: `/r${i}/${k}/*`, price_usd: '0' })),
    }));
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(
        bodies.map((body) => app.call('PUT', `/v1/sites/${target.siteId}/pricing`, { body, headers: owner.auth })),
      );
      expect(answers.map((answer) => answer.status)).toEqual(bodies.map(() => 200));
      const stored = (await app.call('GET', `/v1/sites/${target.siteId}/pricing`, { headers: owner.auth })).body;
      const sent = bodies.find((body) => body.default_price_usd === stored.default_price_usd);
      expect({ default_price_usd: stored.default_price_usd, rules: stored.rules }).toEqual(sent);
    }
  });

  it('prices from one pricing whole, never a new one’s rules under the default its caller read before', async () => {
    // A caller reads the site's row (version, default), then a replacement commits, then the
    // rules are loaded: the old default with the new rules priced /paid/x free, where both charge.
    const owner = await registerPublisher(app);
    const target = await createSite(app, owner);
    const pricing = (body: unknown) =>
      app.call('PUT', `/v1/sites/${target.siteId}/pricing`, { body, headers: owner.auth });
    expect((await pricing({ default_price_usd: '0', rules: [{ path: '/paid/*', price_usd: '0.05' }] })).status).toBe(
      200,
    );
    const before = await app.database.prisma.site.findUniqueOrThrow({ where: { id: target.siteId } });
    expect((await pricing({ default_price_usd: '0.05', rules: [{ path: '/free/*', price_usd: '0' }] })).status).toBe(
      200,
    );
    const prices = await app.app.get(PricingService).prices(before);
    expect(priceOfSpelling(prices, '/paid/x')).toBe(50_000n);
    expect(priceOfSpelling(prices, '/free/x')).toBe(0n);
  });

  describe('accepted prices', () => {
    it.each([
      [0, '0'],
      [1, '1'],
      ['0', '0'],
      ['0.000001', '0.000001'],
      ['00.5', '0.5'],
      ['+0.5', '0.5'],
      [0.005, '0.005'],
      ['0.0050', '0.005'],
    ])('default_price_usd %p is stored as %p', async (input, stored) => {
      expect((await put({ default_price_usd: input })).status).toBe(200);
      expect(
        (await app.call('GET', `/v1/sites/${site.siteId}/pricing`, { headers: publisher.auth })).body.default_price_usd,
      ).toBe(stored);
    });
  });

  describe('rejected prices answer 422 with the spec’s item shape', () => {
    it.each([['1.0000001'], ['-0.1'], ['.'], ['+-'], [1.5], ['abc'], [null], [true], [{}], ['1e-3'], [' 0.5']])(
      'default_price_usd %p',
      async (input) => {
        const response = await put({ default_price_usd: input });
        expect(response.status).toBe(422);
        const [item, ...rest] = response.body.detail;
        expect(rest).toEqual([]);
        expect(item.loc).toEqual(['body', 'default_price_usd']);
        expect(typeof item.msg).toBe('string');
        expect(item.type).toMatch(/^(price_\w+|missing)$/);
        if (input !== null) expect(item.input).toEqual(input);
      },
    );

    it('a rule price, located by index', async () => {
      const response = await put({
        default_price_usd: '0.01',
        rules: [
          { path: '/a', price_usd: '0.1' },
          { path: '/b', price_usd: '2' },
        ],
      });
      expect(response.status).toBe(422);
      expect(response.body.detail).toEqual([
        {
          loc: ['body', 'rules', 1, 'price_usd'],
          msg: expect.any(String),
          type: 'price_range',
          input: '2',
          ctx: expect.any(Object),
        },
      ]);
    });

    it('a missing default price', async () => {
      const response = await put({ rules: [] });
      expect(response.status).toBe(422);
      expect(response.body.detail[0].loc).toEqual(['body', 'default_price_usd']);
    });

    it('leaves the previous pricing untouched', async () => {
      await put({ default_price_usd: '0.02', rules: [{ path: '/keep', price_usd: '0.03' }] });
      await put({ default_price_usd: '0.01', rules: [{ path: '/x', price_usd: 'oops' }] });
      const current = await app.call('GET', `/v1/sites/${site.siteId}/pricing`, { headers: publisher.auth });
      expect(current.body).toMatchObject({ default_price_usd: '0.02', rules: [{ path: '/keep', price_usd: '0.03' }] });
    });
  });

  describe('rules', () => {
    it('accepts the pattern as `path` and as `path_pattern`, and replaces all rules', async () => {
      const first = await put({
        default_price_usd: '0.001',
        rules: [
          { path: '/a/*', price_usd: 0.01 },
          { path_pattern: '/b/*', price_usd: '0.02' },
        ],
      });
      expect(first).toMatchObject({ status: 200, body: { rules_applied: 2 } });
      const second = await put({ default_price_usd: '0.001', rules: [{ path_pattern: '/c', price_usd: '0' }] });
      expect(second.body).toEqual({ rules_applied: 1 });
      const current = await app.call('GET', `/v1/sites/${site.siteId}/pricing`, { headers: publisher.auth });
      expect(current.body).toEqual({
        site_id: site.siteId,
        default_price_usd: '0.001',
        rules: [{ path: '/c', price_usd: '0' }],
        version: expect.any(Number),
        updated_at: expect.any(String),
      });
    });

    it('treats no rules as an empty list', async () => {
      expect((await put({ default_price_usd: '0.5' })).body).toEqual({ rules_applied: 0 });
    });

    it('rejects a pattern valid as written but not as a lenient router keys paths, which would break every gate', async () => {
      const response = await put({ default_price_usd: '0.01', rules: [{ path: '/a\\/', price_usd: '1' }] });
      expect(response.status).toBe(422);
      expect(response.body.detail[0]).toMatchObject({ loc: ['body', 'rules', 0, 'path'], type: 'pattern_syntax' });
    });

    it('rejects a list, or anything but an object, where a rule should be: 422, nothing stored', async () => {
      const before = (await app.call('GET', `/v1/sites/${site.siteId}/pricing`, { headers: publisher.auth })).body;
      for (const rules of [[[]], [[{ path: '/x', price_usd: '0.1' }]], [[[]]], ['/x'], [null]]) {
        const response = await put({ default_price_usd: '0.1', rules });
        expect({ rules, status: response.status }).toEqual({ rules, status: 422 });
        expect(response.body.detail[0]).toMatchObject({ loc: ['body', 'rules'], type: 'dict_type' });
      }
      const after = (await app.call('GET', `/v1/sites/${site.siteId}/pricing`, { headers: publisher.auth })).body;
      expect(after.version).toBe(before.version);
    });

    it('rejects `**`, a missing pattern, a relative pattern and conflicting aliases', async () => {
      const globstar = await put({ default_price_usd: '0', rules: [{ path: '/blog/**', price_usd: '0.1' }] });
      expect(globstar.status).toBe(422);
      expect(globstar.body.detail[0]).toMatchObject({
        loc: ['body', 'rules', 0, 'path'],
        type: 'pattern_globstar',
        input: '/blog/**',
      });
      const missing = await put({ default_price_usd: '0', rules: [{ price_usd: '0.1' }] });
      expect(missing.body.detail[0]).toMatchObject({ loc: ['body', 'rules', 0, 'path'], type: 'missing' });
      const relative = await put({ default_price_usd: '0', rules: [{ path: 'blog', price_usd: '0.1' }] });
      expect(relative.body.detail[0]).toMatchObject({ loc: ['body', 'rules', 0, 'path'], type: 'pattern_syntax' });
      const conflicting = await put({
        default_price_usd: '0',
        rules: [{ path: '/a', path_pattern: '/b', price_usd: '0.1' }],
      });
      expect(conflicting.status).toBe(422);
      expect(conflicting.body.detail[0].loc).toEqual(['body', 'rules', 0, 'path_pattern']);
    });

    it('rejects rules that are not a list of objects', async () => {
      expect((await put({ default_price_usd: '0', rules: 'nope' })).body.detail[0]).toMatchObject({
        loc: ['body', 'rules'],
        type: 'list_type',
      });
      expect((await put({ default_price_usd: '0', rules: [7] })).status).toBe(422);
    });

    it('refuses rules that would take too much memory compiled: 422 naming the bound, nothing stored', async () => {
      // A part per star, each with tables of its own: 250 such rules fit the body limit and took 1.5 GB
      // once keyed for every router (and 10 s of one core to compile).
      const before = await app.call('GET', `/v1/sites/${site.siteId}/pricing`, { headers: publisher.auth });
      const heavy = Array.from({ length: 250 }, (_, i) => ({ path: '/*' + '?*'.repeat(500) + i, price_usd: '0.01' }));
      const started = Date.now();
      const refused = await put({ default_price_usd: '0', rules: heavy });
      expect(Date.now() - started).toBeLessThan(5000);
      expect(refused.status).toBe(422);
      expect(refused.body.detail[0]).toMatchObject({
        loc: ['body', 'rules'],
        msg: expect.stringContaining(`at most ${MAX_SITE_PRICES_HEAP_BYTES / 1024 / 1024} MiB`),
      });
      const after = await app.call('GET', `/v1/sites/${site.siteId}/pricing`, { headers: publisher.auth });
      expect(after.body).toEqual(before.body);
      // Within the bound: taken.
      expect((await put({ default_price_usd: '0', rules: heavy.slice(0, 2) })).status).toBe(200);
    });

    it('weighs rules with every table routers’ keyings build: ten with a negated class', async () => {
      // 19 rules in 10 KiB: about 3.8 MB as written, some 38 MB once every keying built its tables.
      const negated = Array.from({ length: 19 }, (_, i) => ({
        path: `/n${i}/${'*[!a]'.repeat(100)}*`,
        price_usd: '0.01',
      }));
      expect((await put({ default_price_usd: '0', rules: negated })).status).toBe(422);
      expect((await put({ default_price_usd: '0', rules: negated.slice(0, 9) })).status).toBe(200);
    });

    it('accepts 1,000 rules and rejects 1,001', async () => {
      const rules = (n: number) => Array.from({ length: n }, (_, i) => ({ path: `/r/${i}/*`, price_usd: '0.001' }));
      expect((await put({ default_price_usd: '0', rules: rules(1000) })).body).toEqual({ rules_applied: 1000 });
      const tooMany = await put({ default_price_usd: '0', rules: rules(1001) });
      expect(tooMany.status).toBe(422);
      expect(tooMany.body.detail[0]).toMatchObject({ loc: ['body', 'rules'], type: 'too_long' });
    });
  });

  describe('resolution: first match wins, else the default', () => {
    beforeAll(async () => {
      const response = await put({
        default_price_usd: '0.001',
        rules: [
          { path: '/blog/free', price_usd: '0' },
          { path: '/blog/*', price_usd: '0.01' },
          { path: '/a?c', price_usd: '0.02' },
          { path: '/[ab]x', price_usd: '0.03' },
          { path: '/blog/free', price_usd: '0.9' },
        ],
      });
      expect(response.status).toBe(200);
    });

    it.each([
      ['/blog/a', '0.01', 1],
      ['/blog/a/b', '0.001', null],
      ['/blog/free', '0', 0],
      ['/abc', '0.02', 2],
      ['/ac', '0.001', null],
      ['/a/c', '0.001', null],
      ['/ax', '0.03', 3],
      ['/bx', '0.03', 3],
      ['/cx', '0.001', null],
      ['/blog/a?page=2', '0.01', 1],
      ['https://example.com/blog/a#top', '0.01', 1],
      ['/elsewhere', '0.001', null],
    ])('%s costs %s (rule %p)', async (path, price, rule) => {
      expect(await resolve(path)).toMatchObject({ price_usd: price, rule });
    });
  });

  describe('a costly path against many wildcard rules', () => {
    // 1,000 rules that every path is tried against, each reading its whole segment: a 2,040-character
    // path took some 49 million matcher steps (65–90 ms of one core) where pricing a request may take 2.
    const longPath = '/' + 'a'.repeat(2039);
    /** At most `budgets` of MAX_PRICING_STEPS since `steps` (and what a lookup takes to notice it spent one). */
    const within = (steps: number, budgets: number) =>
      expect(globSteps() - steps).toBeLessThan(budgets * MAX_PRICING_STEPS + 20_000);
    let owner: TestPublisher;
    let costly: TestSite;
    beforeAll(async () => {
      owner = await registerPublisher(app);
      costly = await createSite(app, owner);
      const rules = Array.from({ length: 1000 }, (_, i) => ({ path: `/*${'a?'.repeat(20)}b${i}*`, price_usd: '0.5' }));
      const response = await app.call('PUT', `/v1/sites/${costly.siteId}/pricing`, {
        body: { default_price_usd: '0.01', rules },
        headers: owner.auth,
      });
      expect(response.status).toBe(200);
    });
    const siteRow = () => app.database.prisma.site.findUniqueOrThrow({ where: { id: costly.siteId } });
    const rowOf = (site: TestSite) => app.database.prisma.site.findUniqueOrThrow({ where: { id: site.siteId } });
    /**
     * `count` sites of `publisher`, each of 800 rules of 127 characters (within what one site may weigh),
     * whose tables weigh some 12 MB each once keyed for every router: more together than the cache keeps.
     */
    const heavySitesOf = async (publisher: TestPublisher, count = 6) => {
      const rules = Array.from({ length: 800 }, (_, i) => ({ path: `/*${'a?'.repeat(60)}b${i}*`, price_usd: '0.5' }));
      const sites: TestSite[] = [];
      for (let i = 0; i < count; i++) {
        const site = await createSite(app, publisher);
        const response = await app.call('PUT', `/v1/sites/${site.siteId}/pricing`, {
          body: { default_price_usd: '0.01', rules },
          headers: publisher.auth,
        });
        expect(response.status).toBe(200);
        sites.push(site);
      }
      return sites;
    };

    it('keeps compiled prices within a weight bound: one account’s large tables cannot fill the heap', async () => {
      // With only a count of sites kept, 200 such sites of one account's took 3 GB.
      const pricing = app.app.get(PricingService);
      const big = await heavySitesOf(owner);
      const first = await pricing.prices(await rowOf(big[0]));
      for (const site of big) expect(await pricing.priceOfRoute(await rowOf(site), readRoute('/x'))).toBe(10_000n);
      const cache = pricing['compiled'];
      expect(cache.weight).toBeGreaterThan(MAX_CACHED_PRICE_BYTES / 2);
      expect(cache.weight).toBeLessThanOrEqual(MAX_CACHED_PRICE_BYTES);
      const last = await rowOf(big[5]);
      expect(await pricing.prices(last)).toBe(await pricing.prices(last));
      expect(await pricing.prices(await rowOf(big[0]))).not.toBe(first); // loaded first, dropped first
    });

    it('stops compiling a publisher’s sites once they compiled a minute’s worth: 503, nothing charged, others priced', async () => {
      // Read in turn, each read compiled one again, some 100 ms of CPU a read, for as long as the account cared to ask.
      const pricing = app.app.get(PricingService);
      const rows = await Promise.all((await heavySitesOf(await registerPublisher(app))).map(rowOf));
      let reads = 0;
      let refusal: unknown;
      while (refusal === undefined && reads < 60) {
        try {
          await pricing.priceOfRoute(rows[reads % rows.length], readRoute('/x'));
          reads++;
        } catch (error) {
          refusal = error;
        }
      }
      expect(refusal).toMatchObject({ extra: { charged: false } });
      expect((refusal as { getStatus(): number }).getStatus()).toBe(503);
      // About 256 MiB of tables of some 13 MB each: twenty reads, give or take the estimate.
      expect(reads).toBeGreaterThan(10);
      expect(reads).toBeLessThan(40);
      // Another publisher's site is priced as before.
      const other = await app.database.prisma.site.findUniqueOrThrow({ where: { id: costly.siteId } });
      await expect(pricing.priceOfRoute(other, readRoute('/x'))).resolves.toBe(10_000n);
    });

    it('keeps another publisher’s compiled site while one account’s heavy sites are read in turn', async () => {
      // The cache dropped the least recently read site whoever's it was: one account reading its heavy
      // sites in turn had every other account's heavy site compiled again, on that account's budget.
      const pricing = app.app.get(PricingService);
      const victim = await rowOf((await heavySitesOf(await registerPublisher(app), 1))[0]);
      await pricing.priceOfRoute(victim, readRoute('/x')); // its keyed tables built: some 12 MB
      const kept = await pricing.prices(victim);
      const rows = await Promise.all((await heavySitesOf(await registerPublisher(app))).map(rowOf));
      for (const row of [...rows, rows[0]]) await pricing.priceOfRoute(row, readRoute('/x'));
      expect(pricing['compiled'].weight).toBeLessThanOrEqual(MAX_CACHED_PRICE_BYTES);
      expect(await pricing.prices(victim)).toBe(kept);
    });

    it('counts compiles that start together: a burst of reads of many sites compiles no more than the minute allows', async () => {
      // The budget was asked before the rules' read and charged after the compile: every read of a
      // burst passed the check while the others waited on the database (60 of them compiled 833 MiB).
      const pricing = app.app.get(PricingService);
      const rows = await Promise.all((await heavySitesOf(await registerPublisher(app))).map(rowOf));
      const kept = pricing['compiles'];
      Object.assign(pricing, { compiles: new CompileBudget(3 * 13 * 1024 * 1024) }); // about three of these sites a minute
      try {
        const reads = await Promise.allSettled(rows.map((row) => pricing.priceOfRoute(row, readRoute('/x'))));
        const priced = reads.filter((read) => read.status === 'fulfilled').length;
        expect(priced).toBeGreaterThanOrEqual(2);
        expect(priced).toBeLessThanOrEqual(4);
        for (const read of reads)
          if (read.status === 'rejected') expect(read.reason).toMatchObject({ extra: { charged: false } });
      } finally {
        Object.assign(pricing, { compiles: kept });
      }
    });

    it('judges a gate offered before the last price change within the step budget, as the site’s highest price', async () => {
      const pricing = app.app.get(PricingService);
      const site = await siteRow();
      await pricing.prices(site); // compiled outside the count
      const steps = globSteps();
      await expect(pricing.assertOfferStands(site, { path: longPath, micros: 10_000n, iat: 0 })).rejects.toMatchObject({
        status: 409,
      });
      // The path as written, then as routers read it (its spellings, then its static files).
      within(steps, 3);
      const again = globSteps();
      await expect(
        pricing.assertOfferStands(site, { path: longPath, micros: 500_000n, iat: 0 }),
      ).resolves.toBeUndefined();
      within(again, 3);
    });

    it('answers the publisher’s resolve of such a path 422 within the step budget, naming the price it is charged', async () => {
      await app.app.get(PricingService).prices(await siteRow());
      const steps = globSteps();
      const response = await app.call(
        'GET',
        `/v1/sites/${costly.siteId}/pricing/resolve?path=${encodeURIComponent(longPath)}`,
        { headers: owner.auth },
      );
      within(steps, 1);
      expect(response.status).toBe(422);
      expect(response.body.detail[0]).toMatchObject({ loc: ['query', 'path'], msg: expect.stringContaining('$0.5') });
      const honest = await app.call(
        'GET',
        `/v1/sites/${costly.siteId}/pricing/resolve?path=/xa1a2a3a4a5a6a7a8a9a0a1a2a3a4a5a6a7a8a9a0b7y`,
        {
          headers: owner.auth,
        },
      );
      expect(honest.body).toMatchObject({ price_usd: '0.5', rule: 7 });
    });
  });

  it('answers 401 without a key and 422 for a body that is not JSON object', async () => {
    expect(
      (await app.call('PUT', `/v1/sites/${site.siteId}/pricing`, { body: { default_price_usd: '0' } })).status,
    ).toBe(401);
    const notObject = await put('just a string');
    expect(notObject.status).toBe(422);
  });
});

describe('GET /v1/site (site token)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('shows the site’s prices and how to pay, to its own middleware only', async () => {
    const publisher = await registerPublisher(app);
    const site = await createSite(app, publisher);
    await app.call('PUT', `/v1/sites/${site.siteId}/pricing`, {
      body: { default_price_usd: '0.002', rules: [{ path: '/a/*', price_usd: '0.01' }] },
      headers: publisher.auth,
    });
    const before = await app.call('GET', '/v1/site', { headers: { 'x-site-token': site.siteToken } });
    expect(before.status).toBe(200);
    expect(before.body).toEqual({
      site_id: site.siteId,
      domain: site.domain,
      default_price_usd: '0.002',
      rules: [{ path: '/a/*', price_usd: '0.01' }],
      pricing_version: 1,
      network: 'local',
      caip2: 'eip155:31337',
      chain_id: 31337,
      asset: app.chain.usdc,
      x402_network: 'local',
      asset_name: 'USD Coin',
      asset_version: '2',
      pay_to: null,
      gate_ttl_seconds: app.config.gateTtlSeconds,
      access_token_ttl_seconds: app.config.accessTokenTtlSeconds,
      settlement_timeout_seconds: Math.ceil(app.chain.settlementTimeoutMs / 1000),
      max_url_length: 2048,
      api_base_url: app.baseUrl,
      batch_settlement: null,
      bot_policy: {
        categories: { ...DEFAULT_CATEGORY_ACTIONS },
        default_categories: [...BOT_CATEGORIES],
        bots: {},
        require_signature: { categories: [], bots: [] },
        version: DEFAULT_CATEGORY_ACTIONS_VERSION,
      },
      usable_secrets: [{ fingerprint: secretFingerprint(site.secret), retires_at: null }],
    });
    // A rotation with a grace period lists the new secret first, then the one retiring; a revocation the new one alone.
    const rotate = (grace_seconds: number) =>
      app.call('POST', `/v1/sites/${site.siteId}/secret/rotate`, { body: { grace_seconds }, headers: publisher.auth });
    const rotation = (await rotate(600)).body;
    const second = rotation.access_token_secret;
    const listed = async () =>
      (await app.call('GET', '/v1/site', { headers: { 'x-site-token': site.siteToken } })).body.usable_secrets;
    expect(await listed()).toEqual([
      { fingerprint: secretFingerprint(second), retires_at: null },
      { fingerprint: secretFingerprint(site.secret), retires_at: rotation.previous_valid_until },
    ]);
    const third = (await rotate(0)).body.access_token_secret;
    expect(await listed()).toEqual([{ fingerprint: secretFingerprint(third), retires_at: null }]);
    expect((await app.call('GET', '/v1/site')).status).toBe(401);
    expect((await app.call('GET', '/v1/site', { headers: publisher.auth })).status).toBe(401);
  });
});
