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
