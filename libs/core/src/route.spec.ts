import { globSteps } from './glob';
import {
  isPlainRoute,
  MAX_PRICING_STEPS,
  priceRoute,
  readRoute,
  routeOf,
  spelledRoute,
  windowsFileName,
} from './route';
import type { RoutingOptions } from './route-key';
import { compileSitePrices } from './site-prices';
import { checkStaticFiles, DEFAULT_STATIC_FILES } from './static-files';

const prices = compileSitePrices(
  [
    { pattern: '/premium/*', micros: 500_000n },
    { pattern: '/free/*', micros: 0n },
    { pattern: '/blog/', micros: 20_000n },
    { pattern: '/static/premium/*', micros: 500_000n },
  ],
  10_000n,
);
const LENIENT: RoutingOptions = {};
const STRICT: RoutingOptions = { caseSensitive: true, strictTrailingSlash: true };
const price = (target: string, routing: RoutingOptions = LENIENT) => priceRoute(prices, readRoute(target), routing);
/** 1,000 wildcard rules that every path is tried against, each reading its whole segment. */
const manyWildcardRules = () =>
  compileSitePrices(
    Array.from({ length: 1000 }, (_, i) => ({ pattern: `/*-v${i}-*`, micros: BigInt(i + 1) })),
    7n,
  );

describe('readRoute', () => {
  it('reads every target as the full reading does, the plain ones it takes a short way included', () => {
    const paths = [
      '/',
      '/premium/a',
      '/premium/a/',
      '/a;b',
      '/a/../b',
      '/a/./b',
      '/a%2Fb',
      '/a%2e%2e/b',
      '/a//b',
      '/A/B',
      '/a?x=1',
      '/a#f',
      '/a\\b',
      '/é',
      '/a b',
    ];
    const origins = [
      'http://example.com',
      'https://example.com:8443',
      'HTTPS://Example.COM',
      'http://127.0.0.1:3000',
      'http://[::1]:8080',
      'http://user:pw@example.com',
      'http://1.2.3.999',
      'http://[zz',
      'http://ex ample.com',
      'http://example.com:99999',
      'http://exa%6dple.com',
      'http://example.com\\x',
      'ftp://example.com',
      'http:/example.com',
      '//example.com',
      'example.com',
    ];
    const targets = [
      ...paths,
      ...origins.flatMap((origin) => paths.map((path) => origin + path)),
      '*',
      '',
      'mailto:a@b',
    ];
    for (const target of targets) expect([target, readRoute(target)]).toEqual([target, spelledRoute(target)]);
  });

  it('reads the path as requestPath does, and the spellings a lenient router may take for it', () => {
    expect(readRoute('/premium/a?x=1')).toEqual({ path: '/premium/a', spellings: ['/premium/a'], odd: false });
    expect(readRoute('https://example.com/premium/a;v=1').spellings).toEqual(['/premium/a;v=1', '/premium/a']);
    expect(readRoute('/static/premium%2fa').spellings).toEqual(['/static/premium%2Fa', '/static/premium/a']);
  });

  it.each([
    '/premium/a/.',
    '/premium/a/x/..',
    '/free/../premium/a',
    '/static/free/..%2fpremium/a',
    '/static/free/%2e%2e%2fpremium/a',
    '/a/%2E/b',
    '/a\\..\\b',
    // A router that cuts at ";" reads "/premium/.." from these: a dot segment.
    '/premium/..;/x',
    '/premium/%2e%2e;/x',
    '/premium/.;x/y',
  ])('calls %s odd: it has a dot segment', (target) => {
    expect(readRoute(target).odd).toBe(true);
  });

  it.each([
    'http:///premium/a',
    'http://@/premium/a',
    'http://:/premium/a',
    'https://:/premium/a',
    'http://user@example.com/premium/a',
    'ws://@/premium/a',
    'ws://example.com/premium/a',
    'file://ftp:/premium/a',
    'data://:80/premium/a',
    'file://,@/premium/a',
    'http://example.com',
    'http://example.com?x',
    '*',
    'premium/a',
  ])('calls %s odd: an absolute or other form that URL parsers read apart', (target) => {
    expect(readRoute(target).odd).toBe(true);
  });

  it.each(['/free\\x', '\\free/x', '/free/x\\', 'http://example.com/free\\x'])(
    'calls %s odd: a raw backslash is "/" to the URL parser and a character to routers',
    (target) => {
      expect(readRoute(target).odd).toBe(true);
    },
  );

  it.each([
    '//free/x',
    '//robots.txt',
    '//robots.txt?x',
    '///free/x',
    'http://example.com//free/x',
    '/blog//free/x',
    '/blog/x//',
  ])(
    'calls %s odd: new URL(target, base) reads "//free" as a host (a mounted router is handed "//free/x"), the gate as a path',
    (target) => {
      expect(readRoute(target).odd).toBe(true);
    },
  );

  it.each([
    '/premium/.\t./llms.txt',
    '/premium/x/.\n./.\r./free/y',
    '/robots.txt\f',
    '\u0001/robots.txt',
    '/free/x y',
    '/free/x\u007f',
    'http://example.com/premium/.\t./llms.txt',
    // Node's legacy url.parse (Express's parseurl falls back to it for these) trims them at the ends too.
    '/docs/report.html\u00a0',
    '/docs/secret/\u00a0',
    '\u00a0/premium/report',
    '/premium/report\ufeff',
    'http://example.com/premium/report\u00a0',
  ])(
    'calls %j odd: the URL parser drops tabs and line breaks (so ".\\t." is a dot segment to it) and trims control characters, which routers match as written',
    (target) => {
      expect(readRoute(target).odd).toBe(true);
    },
  );

  it.each([
    '/premium/a',
    '/premium/a.b',
    '/.well-known/pay.json',
    '/a/...',
    '/a/..b',
    'http://example.com/premium/a',
    'HTTPS://Example.COM:8443/premium/a?x=1',
    'http://127.0.0.1:3000/premium/a',
    'http://[::1]:8080/premium/a',
    'http://my_host.local/premium/a',
    // Within the path, where url.parse keeps it: "à" in UTF-8 read as latin1 holds one.
    '/caf\u00c3\u00a0/menu',
    '/docs/report.html\u00a0?x=1',
  ])('does not call %s odd', (target) => {
    expect(readRoute(target).odd).toBe(false);
  });
});

describe('priceRoute', () => {
  it('prices an ordinary path by its rule, as written', () => {
    expect(price('/premium/a')).toBe(500_000n);
    expect(price('/free/x')).toBe(0n);
    expect(price('/other')).toBe(10_000n);
  });

  it('charges case spellings the route’s price when the router may fold them, and only then', () => {
    for (const spelling of ['/PREMIUM/a', '/Premium/a']) {
      expect({ spelling, lenient: price(spelling), strict: price(spelling, STRICT) }).toEqual({
        spelling,
        lenient: 500_000n,
        strict: 10_000n,
      });
    }
  });

  it('charges trailing-slash spellings the route’s price whatever the router: strict ones serve some routes both ways', () => {
    expect([price('/premium/a/'), price('/premium/a/', STRICT)]).toEqual([500_000n, 500_000n]);
    // A rule written with a trailing slash covers the spelling without one.
    expect([price('/blog'), price('/blog', STRICT)]).toEqual([20_000n, 20_000n]);
  });

  it('keeps a free rule free for the spellings a lenient router folds into it, and never lowers a price', () => {
    expect(price('/free/x/')).toBe(10_000n); // as written it matches no rule: the higher price stands
    expect(price('/FREE/x')).toBe(10_000n);
    expect(price('/free/x')).toBe(0n);
  });

  it('prices the path as the gate reads it: an escaped "?" or "#" in it is not a query or fragment to cut off', () => {
    // "/free/%3F/premium" is the path "/free/?/premium", no rule's: the default. Read again, it would be "/free/", free.
    expect(price('/free/%3F/premium')).toBe(10_000n);
    expect(price('/free/x%23/y')).toBe(10_000n);
    expect(price('/free/x%3F/y', STRICT)).toBe(10_000n);
    // A real query is no part of the path.
    expect(price('/free/x?y=/premium/a')).toBe(0n);
  });

  it('prices the path cut at ";" and with escaped slashes read as "/"', () => {
    expect(price('/premium/a;jsessionid=1')).toBe(500_000n);
    expect(price('/static/premium%2fa')).toBe(500_000n);
    expect(price('/static/premium%5ca')).toBe(500_000n);
  });

  it('prices matrix parameters as servers drop them from every segment, escaped or behind an escaped slash too', () => {
    // Tomcat, Jetty and Spring drop ";…" from each segment; a decoding proxy may have made a "%3B" one.
    const report = compileSitePrices([{ pattern: '/premium/report', micros: 500_000n }], 0n);
    for (const target of [
      '/premium;jsessionid=ABC/report',
      '/premium;x/report;y',
      '/premium%3Bx/report',
      '/premium%2Freport;x',
      '/a/..%3B/premium/report',
      'https://example.com/premium;x/report',
    ]) {
      const route = readRoute(target);
      expect({ target, micros: priceRoute(report, route, LENIENT), plain: isPlainRoute(route) }).toEqual({
        target,
        micros: 500_000n,
        plain: false,
      });
    }
  });

  it('charges a target with a dot segment the site’s highest price', () => {
    expect(price('/free/../other')).toBe(500_000n);
    expect(price('/free/x/.')).toBe(500_000n);
  });
});

describe('routeOf', () => {
  it('prices a rewritten request both ways, binds it to the URL as written, and opens it with no token', () => {
    const route = routeOf({ url: '/fr/premium/a', routedUrl: '/premium/a' });
    expect(route.path).toBe('/fr/premium/a');
    expect(route.spellings).toEqual(expect.arrayContaining(['/fr/premium/a', '/premium/a']));
    expect(priceRoute(prices, route, LENIENT)).toBe(500_000n);
    expect(isPlainRoute(route)).toBe(false);
  });

  it('reads one route when the router routes by the same URL, or by its mount path root with a slash', () => {
    expect(routeOf({ url: '/premium/a?x=1', routedUrl: '/premium/a?x=1' })).toEqual(readRoute('/premium/a?x=1'));
    expect(routeOf({ url: '/premium/a?x=1', routedUrl: '/premium/a?y=2' })).toEqual(readRoute('/premium/a?x=1'));
    expect(routeOf({ url: '/blog', routedUrl: '/blog/' })).toEqual(readRoute('/blog'));
    expect(routeOf({ url: '/premium/a' })).toEqual(readRoute('/premium/a'));
  });
});

describe('priceRoute, with a static file server behind the route', () => {
  // Files priced by their names: a static file server serves each under other URLs too.
  const files = compileSitePrices(
    [
      { pattern: '/docs/*.html', micros: 50_000n },
      { pattern: '/docs/secret/index.html', micros: 70_000n },
      { pattern: '/dirs/*/', micros: 30_000n },
      { pattern: '/free/*', micros: 0n },
    ],
    0n,
  );
  const priced = (target: string, staticFiles = DEFAULT_STATIC_FILES, routing: RoutingOptions = LENIENT) =>
    priceRoute(files, readRoute(target), routing, staticFiles);

  it('prices a directory URL as its index file, and an index file as its directory, by default', () => {
    for (const routing of [LENIENT, STRICT]) {
      expect(['/docs/secret/', '/docs/secret'].map((target) => priced(target, undefined, routing))).toEqual([
        70_000n,
        70_000n,
      ]);
      expect(priced('/dirs/x/index.html', undefined, routing)).toBe(30_000n);
    }
    // Without the static files' reading, the directory URL was free.
    expect(
      priceRoute(files, readRoute('/docs/secret/'), LENIENT, { index: [], extensions: [], precompressed: [] }),
    ).toBe(0n);
  });

  it('prices a name without its extension as the file, where extensions are tried', () => {
    const withHtml = checkStaticFiles({ extensions: ['html'] });
    expect([priced('/docs/report', withHtml), priced('/docs/secret/index', withHtml)]).toEqual([50_000n, 70_000n]);
    expect(priced('/docs/report')).toBe(0n); // no extensions tried: /docs/report is no file's name
  });

  it('prices an index file as its directory where the directory’s rule ends in "*" (which may match nothing)', () => {
    const dir = compileSitePrices(
      [
        { pattern: '/pub/*.html', micros: 0n },
        { pattern: '/pub/*', micros: 30_000n },
      ],
      0n,
    );
    for (const target of ['/pub/', '/pub', '/pub/index.html'])
      expect([target, priceRoute(dir, readRoute(target), LENIENT, DEFAULT_STATIC_FILES)]).toEqual([target, 30_000n]);
  });

  it('reads extensions on a name whose only dot leads it, as the servers do (path.extname)', () => {
    const withHtml = checkStaticFiles({ extensions: ['html'] });
    expect(priced('/docs/.secret', withHtml)).toBe(50_000n);
    expect(priced('/docs/notes.txt', withHtml)).toBe(0n);
  });

  it('takes no more steps for the static files’ URLs once the path’s own spellings spent the budget', () => {
    const many = manyWildcardRules();
    const before = globSteps();
    expect(
      priceRoute(many, readRoute('/' + 'a'.repeat(2000)), LENIENT, checkStaticFiles({ extensions: ['html'] })),
    ).toBe(many.highest);
    expect(globSteps() - before).toBeLessThan(MAX_PRICING_STEPS + 20_000);
  });

  it('prices the static files’ URLs of a long honest path within a budget of their own', () => {
    const many = manyWildcardRules();
    expect(priceRoute(many, readRoute(`/${'a'.repeat(150)}/index.html`), LENIENT, DEFAULT_STATIC_FILES)).toBe(7n);
  });

  it('raises no path to the default for a spelling no rule names', () => {
    const dearDefault = compileSitePrices([{ pattern: '/free/*', micros: 0n }], 10_000n);
    expect(priceRoute(dearDefault, readRoute('/free/x'), LENIENT, checkStaticFiles({ extensions: ['html'] }))).toBe(0n);
    expect(priceRoute(dearDefault, readRoute('/free/x'), STRICT, DEFAULT_STATIC_FILES)).toBe(0n);
  });
});

describe('priceRoute, with a Windows server behind the route', () => {
  // A paid page among free ones: a spelling a Windows server serves as report.html must not be free.
  const docs = compileSitePrices(
    [
      { pattern: '/docs/*.html', micros: 500_000n },
      { pattern: '/premium/*', micros: 900_000n },
    ],
    0n,
  );

  it.each([
    // Win32 drops trailing dots and spaces from each segment (IIS, nginx on Windows).
    '/docs/report.html.',
    '/docs/report.html%2e',
    '/docs/report.html%20',
    '/docs/report.html.%20.',
    '/docs/report.html./',
    '/docs./report.html',
    '/docs%20/report.html',
    '/docs/report.html.;x',
    'http://example.com/docs/report.html.',
    // NTFS reads "name::$DATA" as the file's main stream.
    '/docs/report.html::$DATA',
    '/docs/report.html%3A%3A$data',
    '/docs/report.html::$DATA.',
    // NTFS reads any stream of the file by its name (a named one is no page, but is priced so), and a
    // folder by its index stream.
    '/docs/report.html:stream',
    '/docs/report.html:',
    '/docs::$INDEX_ALLOCATION/report.html',
    '/docs:$i30:$index_allocation/report.html',
    // A server in C ends the file name at a NUL, whatever follows it.
    '/docs/report.html%00',
    '/docs/report.html%00.txt',
    '/docs/report.html%00/x',
    '/docs/report.html%00/x.txt',
  ])('charges %s report.html’s price, whatever the routing', (target) => {
    for (const routing of [LENIENT, STRICT])
      expect([target, priceRoute(docs, readRoute(target), routing)]).toEqual([target, 500_000n]);
  });

  it.each([
    ['/docs/report.html', 500_000n],
    ['/docs/notes.txt', 0n],
    ['/docs/notes.txt.', 0n],
    ['/docs/.hidden', 0n],
    ['/docs/v1.2/notes', 0n],
    ['/docs/a%20b', 0n],
    ['/docs/..x', 0n],
    ['/docs/v1/', 0n],
    ['/wiki/Talk:Main', 0n],
  ])('prices %s by its rules (a Windows server opens no other file for it)', (target, micros) => {
    expect(priceRoute(docs, readRoute(target), LENIENT)).toBe(micros);
  });

  it('still opens a path ending in "." by a token bound to it, priced as the file a Windows server opens', () => {
    const title = readRoute('/wiki/Washington,_D.C.');
    expect(isPlainRoute(title)).toBe(true);
    const wiki = compileSitePrices([{ pattern: '/wiki/*', micros: 1_000n }], 0n);
    expect(priceRoute(wiki, title, LENIENT)).toBe(1_000n);
  });

  it('keeps a wiki’s colon titles at their own price', () => {
    const wiki = compileSitePrices([{ pattern: '/wiki/*', micros: 1_000n }], 0n);
    expect(priceRoute(wiki, readRoute('/wiki/Talk:Main'), LENIENT)).toBe(1_000n);
  });

  it('reads a target of 2,000 characters made to be slow in milliseconds, not a second', () => {
    // Dots not followed by "/" and stream names, five spellings (";", "%2F"): a loop of regular
    // expressions over the whole target took a second here. The fastest of three reads is judged,
    // with room for a loaded machine (CI beside other work took 74 ms for what takes a few alone).
    const target = `/a;b%2Fc;d/${'.'.repeat(1_300)}x${'::$DATA'.repeat(96)}`;
    const route = readRoute(target);
    expect(route.spellings.length).toBeGreaterThan(3);
    const timings = [1, 2, 3].map(() => {
      const started = performance.now();
      expect(priceRoute(docs, route, LENIENT)).toBe(0n);
      return performance.now() - started;
    });
    expect(Math.min(...timings)).toBeLessThan(250);
  });

  it.each([
    ['/docs/report.html.', '/docs/report.html'],
    ['/docs. /a . /b', '/docs/a/b'],
    ['/a/b::$DATA::$data', '/a/b'],
    ['/a:$I30:$INDEX_ALLOCATION/b', '/a/b'],
    ['/a/b%00x/c', '/a/b'],
    ['/ ', '/'],
    ['/a/b.txt', '/a/b.txt'],
  ])('reads %s as %s on Windows', (spelling, file) => {
    expect(windowsFileName(spelling)).toBe(file);
  });
});

describe('priceRoute’s work', () => {
  // 1,000 rules that every path is tried against, each reading the whole segment: a 2,000-character
  // path with four spellings, each priced as written and as routers key it, read the path about
  // 20,000 times, hundreds of milliseconds for any visitor who sends one.
  const many = manyWildcardRules();

  it('is bounded: past MAX_PRICING_STEPS a route is priced at the site’s highest price, never lower', () => {
    const route = readRoute('/' + 'a'.repeat(2000) + 'İ%2F;x');
    expect(route.spellings.length).toBeGreaterThan(2);
    const before = globSteps();
    expect(priceRoute(many, route, LENIENT)).toBe(many.highest);
    expect(globSteps() - before).toBeLessThan(MAX_PRICING_STEPS + 20_000);
  });

  it('prices ordinary paths against the same rules in full', () => {
    expect(priceRoute(many, readRoute('/post-v999-x'), LENIENT)).toBe(1000n);
    expect(priceRoute(many, readRoute('/post-v0-x'), LENIENT)).toBe(1n);
    expect(priceRoute(many, readRoute('/' + 'a'.repeat(300)), LENIENT)).toBe(7n);
  });
});
