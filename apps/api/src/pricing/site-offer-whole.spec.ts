/*
 * GET /v1/site reads the site's row (default price, pricing_version) in the site-token guard, and
 * its rules in a later query. A pricing change committed between the two gave an offer no PUT ever
 * made: the old version and default with the new rules (helper-347's F3). The middleware keys its
 * compiled prices by pricing_version, so a gate that had not seen that version yet (one starting,
 * or one that missed it) priced by the mix until its next refresh.
 */
import { createSite, registerPublisher, type TestPublisher, type TestSite } from '../../test/fixtures';
import { startTestApp, type TestApp } from '../../test/test-app';

describe('GET /v1/site: one pricing, never a mix of two', () => {
  let app: TestApp;
  let owner: TestPublisher;
  let site: TestSite;
  beforeAll(async () => {
    app = await startTestApp();
    owner = await registerPublisher(app);
    site = await createSite(app, owner);
  });
  afterAll(() => app.close());

  const putPricing = (body: unknown) =>
    app.call('PUT', `/v1/sites/${site.siteId}/pricing`, { headers: owner.auth, body });

  it('an offer holds the default and the rules of the same version', async () => {
    // Version A: pages free by default, articles charged.
    expect(
      (await putPricing({ default_price_usd: '0', rules: [{ path: '/articles/*', price_usd: '0.05' }] })).status,
    ).toBe(200);
    // The publisher moves to "everything charged": version B, default 0.05, no rules.
    let hook: (() => Promise<void>) | undefined = async () => {
      expect((await putPricing({ default_price_usd: '0.05', rules: [] })).status).toBe(200);
    };
    const prisma = app.database.prisma;
    // The change lands after the guard read the site's row, before the rules are read (a few ms apart on a busy API).
    app.database.prisma = new Proxy(prisma, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (key !== 'priceRule') return value;
        return new Proxy(value as object, {
          get(delegate, method) {
            const member = Reflect.get(delegate, method);
            if (method !== 'findMany' || !hook) return member;
            return async (...args: unknown[]) => {
              const run = hook!;
              hook = undefined;
              await run();
              return (member as (...a: unknown[]) => unknown).apply(delegate, args);
            };
          },
        });
      },
    });
    try {
      const offer = await app.call('GET', '/v1/site', { headers: { 'x-site-token': site.siteToken } });
      expect(offer.status).toBe(200);
      const { default_price_usd, rules, pricing_version } = offer.body as {
        default_price_usd: string;
        rules: unknown[];
        pricing_version: number;
      };
      // Version A's default "0" with version B's rules (none) was every page free, a pricing never set.
      const now = await app.call('GET', `/v1/sites/${site.siteId}/pricing`, { headers: owner.auth });
      expect([default_price_usd, rules, pricing_version]).toEqual(['0.05', [], now.body.version]);
    } finally {
      app.database.prisma = prisma;
    }
  });
});
