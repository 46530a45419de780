import { pageHref, PAGES, parseRoute, routeHref } from './routes';

describe('routes', () => {
  it('reads the page and site from the fragment', () => {
    expect(parseRoute('')).toEqual({ page: 'overview' });
    expect(parseRoute('#/sites')).toEqual({ page: 'sites' });
    expect(parseRoute('#/pricing/4b1c')).toEqual({ page: 'pricing', siteId: '4b1c' });
    expect(parseRoute('#/payments')).toEqual({ page: 'payments', siteId: null });
    expect(parseRoute('#/crawlers/4b1c')).toEqual({ page: 'crawlers', siteId: '4b1c' });
    expect(parseRoute('#/settings')).toEqual({ page: 'settings' });
    expect(parseRoute('#/nowhere')).toEqual({ page: 'overview' });
  });

  it('keeps a broken escape as typed instead of failing', () => {
    expect(parseRoute('#/pricing/%E0')).toEqual({ page: 'pricing', siteId: '%E0' });
  });

  it('writes fragments that read back to the same route', () => {
    for (const route of [
      { page: 'sites' },
      { page: 'pricing', siteId: 'a/b?c' },
      { page: 'payments', siteId: null },
      { page: 'crawlers', siteId: 'x y' },
    ] as const) {
      expect(parseRoute(routeHref(route))).toEqual(route);
    }
  });

  it('links every page with no site chosen', () => {
    for (const page of PAGES)
      expect(parseRoute(pageHref(page))).toEqual(
        page === 'overview' || page === 'sites' || page === 'settings' ? { page } : { page, siteId: null },
      );
  });
});
