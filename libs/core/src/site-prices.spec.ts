import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { priceRoute, readRoute } from './route';
import { compileSitePrices, priceOfSpelling, sitePricesHeapBytes } from './site-prices';

const prices = compileSitePrices(
  [
    { pattern: '/premium/*', micros: 500_000n },
    { pattern: '/free/*', micros: 0n },
  ],
  10_000n,
);

describe('priceOfSpelling', () => {
  it('prices a spelling a lenient router folds into a route at the higher of both readings', () => {
    expect(priceOfSpelling(prices, '/premium/a')).toBe(500_000n);
    expect(priceOfSpelling(prices, '/PREMIUM/a')).toBe(500_000n);
    expect(priceOfSpelling(prices, '/premium/a/')).toBe(500_000n);
    // Never lower than as written: /FREE/x is the default price, though the folded reading is free.
    expect(priceOfSpelling(prices, '/FREE/x')).toBe(10_000n);
    expect(priceOfSpelling(prices, '/free/x')).toBe(0n);
  });

  it('prices an unknown router both ways for each option: case kept with the slash dropped, and the reverse', () => {
    // /Abc/x/ reaches /Abc/x on a case-sensitive router that drops slashes: "/[!a-z]*/x" prices it,
    // folded it does not, and as written only without the slash.
    const notLower = compileSitePrices([{ pattern: '/[!a-z]*/x', micros: 1_000_000n }], 10_000n);
    expect(priceOfSpelling(notLower, '/Abc/x/')).toBe(1_000_000n);
    expect(priceOfSpelling(notLower, '/Abc/x/', { caseSensitive: false, strictTrailingSlash: false })).toBe(1_000_000n);
    expect(priceOfSpelling(notLower, '/Abc/x/y', { caseSensitive: false })).toBe(10_000n);
    // /A/x/ reaches /A/X/ on a router that folds case but keeps slashes.
    const slashed = compileSitePrices(
      [
        { pattern: '/a/x', micros: 0n },
        { pattern: '/A/X/', micros: 1_000_000n },
      ],
      10_000n,
    );
    expect(priceOfSpelling(slashed, '/A/x/')).toBe(1_000_000n);
  });

  it('folds escaped letters in a rule as letters, and keeps every character one character long', () => {
    const ete = compileSitePrices([{ pattern: '/%C3%89t%C3%A9/*', micros: 1_000_000n }], 0n);
    expect(priceOfSpelling(ete, '/Été/x/')).toBe(1_000_000n);
    expect(priceOfSpelling(ete, '/été/x')).toBe(1_000_000n);
    // An escaped "*" is no wildcard, folded or not.
    const star = compileSitePrices([{ pattern: '/a%2A', micros: 1_000_000n }], 0n);
    expect(priceOfSpelling(star, '/A*')).toBe(1_000_000n);
    expect(priceOfSpelling(star, '/Ab')).toBe(0n);
    // "İ" lower-cases to two code points: kept, so "?" still matches it.
    const one = compileSitePrices([{ pattern: '/?/*', micros: 1_000_000n }], 0n);
    expect(priceOfSpelling(one, '/İ/a/')).toBe(1_000_000n);
  });

  it.each([
    ['/µ/*', '/μ/x'],
    ['/µ/*', '/Μ/x'],
    ['/ς/*', '/σ/x'],
    ['/ΑΣ/*', '/ασ/x'],
    ['/files/a%2Fb', '/files/A%2Fb'],
    ['/x%FF', '/X%FF'],
    ['/x[%41]', '/X4'],
    ['/a/*', '/a'],
    ['/a/*', '/A'],
    // Escaped cased characters that are not letters (Roman numeral one, circled A), folded like letters.
    ['/%E2%85%A0/*', '/\u2170/a'],
    ['/%E2%92%B6/*', '/\u24D0/a'],
    // An escape after "\\" is still an escape (the compiler decodes it), and a letter.
    ['/\\%50remium/*', '/premium/a'],
    ['/\\%50remium/*', '/PREMIUM/a'],
    ['/%C3%89t%C3%A9/*', '/ÉTÉ/a'],
    // Fastify's router lower-cases whole paths: "İ" becomes "i" and a combining dot above.
    ['/İstanbul/*', '/i\u0307stanbul/x'],
    ['/İstanbul/*', '/I\u0307STANBUL/x'],
    ['/i\u0307stanbul/*', '/İstanbul/x'],
    // A rule that reads "i" and the dot apart still meets a path holding them (and "İ", Fastify's reading of it).
    ['/api*', '/API\u0307-docs'],
    ['/api*', '/AP\u0130-docs'],
    ['/x/i?', '/x/I\u0307'],
    // Escapes that are no letters keep their meaning: an escaped "*" is no wildcard.
    ['/a%2A', '/A*'],
  ])('prices %s’s route for %s, which a case- or slash-lenient router serves from it', (pattern, path) => {
    const table = compileSitePrices([{ pattern, micros: 100n }], 0n);
    expect(priceOfSpelling(table, path)).toBe(100n);
  });

  it.each([
    // A negated class: its lower-case letters stay in it, so the route /blog/dog is priced by it.
    ['/blog/[!A-Z]*', '/blog/dog', ['/BLOG/dog', '/Blog/dog', '/blog/Dog', '/blog/DOG']],
    ['/[^A-Z]*/p', '/news/p', ['/NEWS/p']],
    // A range across the case boundary: "Z-z" holds "A"'s lower case, "a".
    ['/x[Z-z]', '/xa', ['/xA', '/Xa', '/XA']],
    ['/x[A-_]', '/xA', ['/xa', '/XA']],
    // Letters whose other cases lie outside the class as written: the Kelvin sign is a "k".
    ['/[!k]ey', '/\u212Aey', ['/key', '/Key', '/KEY']],
    ['/[\u212A]ey', '/\u212Aey', ['/key', '/Key']],
    ['/[!s]x', '/\u017Fx', ['/sx', '/SX']],
  ])(
    'prices every case spelling of a route %s prices (%s) at its price, classes as a case-insensitive router reads them',
    (pattern, route, spellings) => {
      const unescape = (text: string) =>
        text.replace(/\\u([0-9A-F]{4})/g, (_, hex) => String.fromCharCode(parseInt(hex, 16)));
      const table = compileSitePrices([{ pattern: unescape(pattern), micros: 100_000n }], 0n);
      expect(priceOfSpelling(table, unescape(route))).toBe(100_000n);
      for (const spelling of spellings)
        expect([spelling, priceOfSpelling(table, unescape(spelling))]).toEqual([spelling, 100_000n]);
      // A router known to be case-sensitive reads each spelling as written.
      const strict = { caseSensitive: true, strictTrailingSlash: true };
      expect(priceOfSpelling(table, unescape(route), strict)).toBe(100_000n);
    },
  );

  it('prices a route by the higher of the two readings of a negated class: neither is the one a router means', () => {
    // Free "/x/[!A-Z]*" (paths starting lower-case), $1 otherwise: Express serves /x/dog as the route /x/Dog.
    const free = compileSitePrices([{ pattern: '/x/[!A-Z]*', micros: 0n }], 1_000_000n);
    for (const spelling of ['/x/Dog', '/x/dog', '/X/DOG'])
      expect([spelling, priceOfSpelling(free, spelling)]).toEqual([spelling, 1_000_000n]);
    // As a router known to be case-sensitive reads it: only as written.
    expect(priceOfSpelling(free, '/x/dog', { caseSensitive: true, strictTrailingSlash: true })).toBe(0n);
    // The same rule priced: every spelling of /x/dog at the rule's price.
    const priced = compileSitePrices([{ pattern: '/x/[!A-Z]*', micros: 1_000_000n }], 0n);
    for (const spelling of ['/x/dog', '/X/dog', '/x/DOG'])
      expect([spelling, priceOfSpelling(priced, spelling)]).toEqual([spelling, 1_000_000n]);
  });

  it('never widens a class beyond the cases of its own characters', () => {
    const table = compileSitePrices([{ pattern: '/x[!A-Z]', micros: 100_000n }], 0n);
    // "/" is never in a class; "/x" followed by a digit is as written; nothing makes a two-character segment match.
    expect(priceOfSpelling(table, '/x1')).toBe(100_000n);
    expect(priceOfSpelling(table, '/xab')).toBe(0n);
    const digits = compileSitePrices([{ pattern: '/x[0-9]', micros: 100_000n }], 0n);
    expect(priceOfSpelling(digits, '/xa')).toBe(0n);
    expect(priceOfSpelling(digits, '/X1')).toBe(100_000n);
    // A class of both cases of a letter, negated, keeps that letter out in every case.
    const noK = compileSitePrices([{ pattern: '/[!kK\u212A]ey', micros: 100_000n }], 0n);
    expect(priceOfSpelling(noK, '/Key')).toBe(0n);
    expect(priceOfSpelling(noK, '/Mey')).toBe(100_000n);
  });

  it('does not price a path at the default for a slash it does not have', () => {
    expect(priceOfSpelling(prices, '/free/x')).toBe(0n);
    expect(priceOfSpelling(prices, '/free/x', { strictTrailingSlash: false })).toBe(0n);
  });

  it('prices the other trailing-slash spelling for strict routers too: they serve some routes both ways', () => {
    const strict = { caseSensitive: true, strictTrailingSlash: true };
    // Hono's "/premium/*" serves /premium, a Fastify prefix's "/" route /premium, an Express mount root /premium.
    const section = compileSitePrices([{ pattern: '/premium/*', micros: 500_000n }], 0n);
    expect(priceOfSpelling(section, '/premium', strict)).toBe(500_000n);
    expect(priceOfSpelling(section, '/premium/', strict)).toBe(500_000n);
    // And a page priced without its slash prices the spelling with it.
    const page = compileSitePrices([{ pattern: '/about', micros: 20_000n }], 0n);
    expect(priceOfSpelling(page, '/about/', strict)).toBe(20_000n);
    // Only a rule that matches counts: a free rule's neighbour is not raised to the default.
    expect(priceOfSpelling(prices, '/free/x', strict)).toBe(0n);
    expect(priceOfSpelling(section, '/', strict)).toBe(0n);
  });

  it('prices as written only for a router known to be strict in both ways', () => {
    const strict = { caseSensitive: true, strictTrailingSlash: true };
    expect(priceOfSpelling(prices, '/PREMIUM/a', strict)).toBe(10_000n);
    expect(priceOfSpelling(prices, '/PREMIUM/a', { caseSensitive: true })).toBe(10_000n);
    expect(priceOfSpelling(prices, '/premium/a/', { caseSensitive: true })).toBe(500_000n);
  });

  it('reads the path as it is, never as a URL: an escaped "?" stays in the path', () => {
    const pdf = compileSitePrices([{ pattern: '/premium/*.pdf', micros: 500_000n }], 10_000n);
    expect(priceOfSpelling(pdf, '/premium/x?.pdf')).toBe(500_000n);
  });

  it('knows the site’s highest price', () => {
    expect(prices.highest).toBe(500_000n);
  });
});

describe('heapBytes', () => {
  // The API weighs its cache of many sites' prices by this estimate: what V8 keeps for them.
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const shapes: [string, number, (i: number) => string][] = [
    ['"?" runs between stars', 300, (i) => `/*${'a?'.repeat(60)}b${i}*`],
    ['"?" runs without stars', 300, (i) => `/${'?'.repeat(120)}/${i}`],
    ['classes', 200, (i) => `/*[a-z][!0-9]${'[abc]x'.repeat(30)}${i}*`],
    ['negated classes', 200, (i) => `/*[!a]${'[^b]'.repeat(40)}${i}*`],
    ['literal runs between stars', 1000, (i) => `/*-v${i}-*`],
    ['literal paths', 1000, (i) => `/plain/${'x'.repeat(200)}/${i}`],
    ['a small site', 20, (i) => `/blog/${i}/*`],
    // A chunk per star: many stars are many chunks, each with tables of its own.
    ['"/*" 500 times', 10, (i) => '/*' + '/*'.repeat(500) + i],
    ['"?*" 500 times', 3, (i) => '/*' + '?*'.repeat(500) + i],
    ['"[a]*" 250 times', 5, (i) => '/*' + '[a]*'.repeat(250) + i],
    ['"a*" 500 times', 5, (i) => '/*' + 'a*'.repeat(500) + i],
    // Last: their folded text fills case-fold.ts's memo, whose evictions would free memory in a shape after them.
    ['long literal paths', 200, (i) => `/p${i}/${'a'.repeat(1000)}`],
    ['long literal paths beyond Latin-1', 200, (i) => `/p${i}/${'ā'.repeat(1000)}`],
  ];
  /** The heap and the typed arrays' buffers outside it. */
  const used = () => process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;

  it.each(shapes)(
    'estimates %s within a factor of two of the heap they keep, keyed tables included',
    (_, count, rule) => {
      const rules = Array.from({ length: count }, (_, i) => ({ pattern: rule(i), micros: 1n }));
      const compiled = () => {
        const site = compileSitePrices(rules, 1n);
        priceRoute(site, readRoute('/aİ'), {}); // builds every keyed table
        return site;
      };
      // Enough copies to weigh some 4 MB: noise then moves the ratio little (copies share the folded text case-fold.ts keeps).
      const first = compiled();
      const copies = Math.min(500, Math.max(5, Math.ceil(4e6 / first.heapBytes())));
      let sites = [first, ...Array.from({ length: copies - 1 }, compiled)];
      const estimate = sites.reduce((bytes, site) => bytes + site.heapBytes(), 0);
      // What letting go of them frees: garbage of earlier tests (another file's, in this worker) is gone by then.
      gc();
      const withSites = used();
      sites = [];
      gc();
      const kept = withSites - used();
      expect(sites).toEqual([]);
      expect(estimate / kept).toBeGreaterThan(0.5);
      expect(estimate / kept).toBeLessThan(2);
    },
  );

  it('grows as keyed tables are built, telling the caller each time', () => {
    let built = 0;
    const site = compileSitePrices([{ pattern: '/*[!a]x*', micros: 1n }], 1n, () => built++);
    const exactOnly = site.heapBytes();
    expect(exactOnly).toBe(site.exact.heapBytes);
    priceRoute(site, readRoute('/x'), {});
    expect(built).toBeGreaterThan(0);
    expect(site.heapBytes()).toBeGreaterThan(exactOnly * built);
  });
});

describe('sitePricesHeapBytes', () => {
  it.each([
    ['negated classes (ten tables)', Array.from({ length: 19 }, (_, i) => `/n${i}/${'*[!a]'.repeat(100)}*`)],
    ['classes (six tables)', Array.from({ length: 100 }, (_, i) => `/c${i}/*-[a-z]*/*/item-[0-9]*.html`)],
    ['"?" runs', Array.from({ length: 100 }, (_, i) => `/*${'a?'.repeat(60)}b${i}*`)],
  ])('weighs %s at no less than what every table keying builds takes', (_, patterns) => {
    const site = compileSitePrices(
      patterns.map((pattern) => ({ pattern, micros: 1n })),
      1n,
    );
    // Every keying, "İ" read both ways: what any visitor's paths can make a site build.
    for (const path of ['/x', '/aİ', '/X/', '/aİ/']) priceRoute(site, readRoute(path), {});
    const bound = sitePricesHeapBytes(patterns);
    expect(site.heapBytes()).toBeLessThanOrEqual(bound);
    expect(site.heapBytes()).toBeGreaterThan(bound / 2);
  });

  it('weighs no further once past its limit', () => {
    const heavy = Array.from({ length: 250 }, (_, i) => '/*' + '?*'.repeat(500) + i);
    const limit = sitePricesHeapBytes(heavy.slice(0, 3));
    expect(sitePricesHeapBytes(heavy, limit)).toBeLessThan(2 * limit);
  });
});
