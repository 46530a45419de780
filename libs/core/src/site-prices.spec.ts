import { compileSitePrices, priceOfSpelling } from './site-prices';

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
  ])('prices %s’s route for %s, which a case- or slash-lenient router serves from it', (pattern, path) => {
    const table = compileSitePrices([{ pattern, micros: 100n }], 0n);
    expect(priceOfSpelling(table, path)).toBe(100n);
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
