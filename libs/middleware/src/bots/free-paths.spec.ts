import { compilePriceTable, readRoute, routeOf } from '@crawlgate/core';
import { ALWAYS_FREE_PATHS, isAlwaysFreePath, isAlwaysFreeRoute } from './free-paths';

describe('isAlwaysFreePath', () => {
  it.each([
    '/robots.txt',
    '/robots.txt?ref=1',
    '/sitemap.xml',
    '/sitemap_index.xml',
    '/sitemap-posts.xml',
    '/sitemap1.xml',
    '/wp-sitemap.xml',
    '/sitemap-pages.xml',
    '/sitemap-posts-post.xml',
    // The sitemaps Yoast's and Rank Math's index lists (helper-443), and news sitemaps.
    '/post-sitemap.xml',
    '/page-sitemap2.xml',
    '/product_cat-sitemap.xml',
    '/news-sitemap.xml',
    '/.well-known/pay.json',
    '/.well-known/security.txt',
    '/.well-known/http-message-signatures-directory',
    '/security.txt',
    '/favicon.ico',
    '/favicon.ico?v=3',
    '/llms.txt',
    'https://example.com/robots.txt',
    '/%2Ewell-known/pay.json',
  ])('%s is free', (path) => {
    expect(isAlwaysFreePath(path)).toBe(true);
  });

  it.each([
    '/',
    '/article',
    '/robots.txt/x',
    '/ROBOTS.TXT',
    '/LLMS.TXT',
    '/llms.txt/',
    '/llms.txt;x',
    '/llms-full.txt',
    '/blog/llms.txt',
    '/blog/robots.txt',
    '/sitemap.xml.gz',
    '/sitemaps/posts.xml',
    '/blog/sitemap.xml',
    '/sitemap-posts.html',
    '/blog/post-sitemap.xml',
    '/post-sitemap.xml/x',
    '/post-sitemap.html',
    // Read by "/:id-:slug" or "/:slug-:id" as an article's id or slug (helper-446): only the sitemap plugins' names are free.
    '/12345-sitemap.xml',
    '/my-premium-story-sitemap.xml',
    '/premium-sitemap.xml',
    '/sitemap-12345.xml',
    '/sitemap.posts.xml',
    // A word before the number does not make it a sitemap's: "/:slug-:id.xml" reads id 12345 (helper-447).
    '/sitemap-a-12345.xml',
    '/sitemap_a-12345.xml',
    '/sitemap-premium-story-12345.xml',
    '/news-sitemap-x-12345.xml',
    '/sitemap-posts-12345.xml',
    '/wp-sitemap-posts-post-1.xml',
    '/.well-known',
    '/well-known/pay.json',
    '/favicon.png',
    '/premium?path=/robots.txt',
    // Dot segments resolve before matching, as they do in pricing.
    '/.well-known/../premium',
    '/.well-known/%2E%2E/premium',
    // Escaped separators that file servers may decode into segments.
    '/.well-known/..%2Fpremium.html',
    '/.well-known/..%5Cpremium.html',
    '/sitemap%2F..%2Fpremium.xml',
    // A host "robots.txt" and the path "/" to an app reading new URL(req.url, base).
    '//robots.txt',
  ])('%s is not free', (path) => {
    expect(isAlwaysFreePath(path)).toBe(false);
  });

  it.each([
    '/.well-known/big-story',
    '/.well-known/premium/a',
    '/.well-known/security.txt/x',
    '/.well-known/pay.json/',
    '/.well-known/SECURITY.TXT',
    '/.well-known/acme-challenge',
    '/.well-known/acme-challenge/',
    '/.well-known/acme-challenge/a/b',
    '/.well-known/acme-challenge/a.b',
    '/.well-known/pki-validation/.x',
    '/.well-known/pki-validation/a/b',
    // A segment the visitor chooses: a /:section/:year/:slug route serves these as its pages.
    '/.well-known/acme-challenge/LoqXcYV8q5ONbJQxbmR7SCTNo3tiAXDfowyjxAjEuX0',
    '/.well-known/acme-challenge/big-story',
    '/.well-known/pki-validation/fileauth.txt',
    '/.well-known/unknown-document',
  ])(
    '%s, under /.well-known/ but no document named there, is not free (a router may bind ".well-known" to a parameter)',
    (path) => {
      expect(isAlwaysFreePath(path)).toBe(false);
    },
  );

  it.each([
    '/.well-known/tdmrep.json',
    '/.well-known/agent-card.json',
    '/.well-known/openid-configuration',
    '/.well-known/api-catalog',
  ])('%s is free', (path) => {
    expect(isAlwaysFreePath(path)).toBe(true);
  });

  it('publishes the set as globs, no wider: the sitemaps by their common names only (helper-447)', () => {
    expect(ALWAYS_FREE_PATHS.slice(0, 3)).toEqual(['/robots.txt', '/sitemap.xml', '/sitemap_index.xml']);
    expect(ALWAYS_FREE_PATHS).toContain('/.well-known/security.txt');
    expect(ALWAYS_FREE_PATHS.filter((path) => path.startsWith('/.well-known/') && path.includes('*'))).toEqual([]);
    // Read as prices are (`*` within one segment): a sample a glob matches is free; every one is free
    // or not alike but the sitemaps, of which the globs name the common ones.
    const globs = compilePriceTable(
      ALWAYS_FREE_PATHS.map((pattern) => ({ pattern, micros: 0n })),
      1n,
    );
    const samples = [
      '/robots.txt',
      '/sitemap-posts.xml',
      '/sitemap-12345.xml',
      '/sitemap-a-12345.xml',
      '/post-sitemap-12345.xml',
      '/post-sitemap2.xml',
      '/blog/post-sitemap.xml',
      '/12345-sitemap.xml',
      '/.well-known/pay.json',
      '/.well-known/http-message-signatures-directory',
      '/.well-known/acme-challenge/abc',
      '/security.txt',
      '/favicon.ico',
      '/llms.txt',
      '/.well-known/big-story',
      '/.well-known/premium/a',
      '/.well-known/acme-challenge/a/b',
      '/article',
    ];
    const listed = (path: string) => globs.resolvePath(path).rule !== null;
    for (const path of samples) {
      if (listed(path)) expect({ path, free: isAlwaysFreePath(path) }).toEqual({ path, free: true });
      if (!path.includes('sitemap'))
        expect({ path, listed: listed(path) }).toEqual({ path, listed: isAlwaysFreePath(path) });
    }
    expect(['/sitemap.xml', '/post-sitemap.xml', '/sitemap-posts.xml'].map(listed)).toEqual([true, true, false]);
  });
});

describe('isAlwaysFreeRoute', () => {
  it('frees robots.txt and the well-known documents, but no spelling that could reach another route', () => {
    expect(isAlwaysFreeRoute(readRoute('/robots.txt'))).toBe(true);
    expect(isAlwaysFreeRoute(readRoute('/.well-known/pay.json'))).toBe(true);
    for (const target of [
      '/premium/a;/../../robots.txt',
      '/robots.txt;/../premium/a',
      '/.well-known/../premium',
      '/.well-known/..%2fpremium',
      '/robots.txt%2f..%2fpremium',
      // Raw tabs and controls the URL parser drops or trims and a literal router keeps.
      '/premium/.\t./llms.txt',
      '/premium/x/.\t./.\t./robots.txt',
      '/robots.txt\f',
    ]) {
      expect({ target, free: isAlwaysFreeRoute(readRoute(target)) }).toEqual({ target, free: false });
    }
  });

  it('judges the path as the gate reads it: an escaped "?" or "#" is part of it, not a query or fragment cut off', () => {
    for (const target of [
      '/robots.txt%3Fx',
      '/robots.txt%23x',
      '/sitemap.xml%3F/premium-article',
      '/llms.txt%3F',
      'https://example.com/favicon.ico%3Fa',
      '/sitemap%3Fpremium-a.xml',
      '/sitemap%23premium-a.xml',
      '/wp-sitemap%3F..xml',
      '/sitemap.xml%3F.xml',
    ]) {
      const route = readRoute(target);
      expect(route.path).toMatch(/[?#]/);
      expect({ target, free: isAlwaysFreeRoute(route) }).toEqual({ target, free: false });
    }
    // An escape left in the path (an escaped "%" or "/"): another file to a server that decodes again. Never free.
    for (const target of ['/.well-known/%252e%252e/premium/a', '/sitemap%253F.xml', '/.well-known/a%252Fb'])
      expect({ target, free: isAlwaysFreeRoute(readRoute(target)) }).toEqual({ target, free: false });
    // A real query is not part of the path.
    for (const target of ['/robots.txt?x=1', '/sitemap.xml?page=2', 'https://example.com/llms.txt#top'])
      expect({ target, free: isAlwaysFreeRoute(readRoute(target)) }).toEqual({ target, free: true });
  });

  it('is not free when a rewrite before the gate routed a free path to a paid one', () => {
    expect(isAlwaysFreeRoute(routeOf({ url: '/free/a', routedUrl: '/premium/a' }))).toBe(false);
  });
});
