import { SiteSpend } from './site-spend';

describe('SiteSpend', () => {
  it('counts a site’s payments against its cap, its subdomains together, and takes back what moved nothing', () => {
    const spend = new SiteSpend(3_000n);
    expect(spend.take('a.evil.example', 1_000n)).toBe(true);
    expect(spend.take('b.evil.example', 2_000n)).toBe(true);
    expect(spend.take('c.evil.example', 1n)).toBe(false);
    expect(spend.remaining('evil.example')).toBe(0n);
    // Another site is not held back.
    expect(spend.take('honest.example', 3_000n)).toBe(true);
    spend.giveBack('a.evil.example', 1_000n);
    expect(spend.remaining('x.evil.example')).toBe(1_000n);
    expect(spend.take('c.evil.example', 1_000n)).toBe(true);
  });

  it('counts nothing without a cap', () => {
    const spend = new SiteSpend(undefined);
    expect(spend.take('a.example', 10n ** 12n)).toBe(true);
    expect(spend.remaining('a.example')).toBeUndefined();
  });
});
