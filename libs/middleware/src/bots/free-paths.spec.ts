import { ALWAYS_FREE_PATHS, isAlwaysFreePath } from './free-paths';

describe('isAlwaysFreePath', () => {
  it.each([
    '/robots.txt',
    '/robots.txt?ref=1',
    '/sitemap.xml',
    '/sitemap_index.xml',
    '/sitemap-posts.xml',
    '/sitemap1.xml',
    '/wp-sitemap.xml',
    '/wp-sitemap-posts-post-1.xml',
    '/.well-known/pay.json',
    '/.well-known/security.txt',
    '/.well-known/http-message-signatures-directory',
    '/.well-known/acme-challenge/abc',
    '/security.txt',
    '/favicon.ico',
    '/favicon.ico?v=3',
    '/llms.txt',
    'https://example.com/robots.txt',
    '//robots.txt',
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
  ])('%s is not free', (path) => {
    expect(isAlwaysFreePath(path)).toBe(false);
  });

  it('publishes the same set as globs', () => {
    expect(ALWAYS_FREE_PATHS).toEqual([
      '/robots.txt',
      '/sitemap*.xml',
      '/wp-sitemap*.xml',
      '/.well-known/**',
      '/security.txt',
      '/favicon.ico',
      '/llms.txt',
    ]);
  });
});
