import {
  addRule,
  draftFromPricing,
  moveRule,
  previewPath,
  pricingInput,
  removeRule,
  updateRule,
} from './pricing-draft';

const saved = {
  default_price_usd: '0.001',
  rules: [
    { path: '/blog/*', price_usd: '0.01' },
    { path: '/blog/free-*', price_usd: '0' },
    { path: '/*.pdf', price_usd: '0.05' },
  ],
};

describe('pricing draft', () => {
  it('moves rules up and down, and ignores moves past either end', () => {
    const draft = draftFromPricing(saved);
    const moved = moveRule(draft, 1, -1);
    expect(moved.rules.map((r) => r.path)).toEqual(['/blog/free-*', '/blog/*', '/*.pdf']);
    expect(moveRule(moved, 1, 1).rules.map((r) => r.path)).toEqual(['/blog/free-*', '/*.pdf', '/blog/*']);
    expect(moveRule(draft, 0, -1)).toBe(draft);
    expect(moveRule(draft, 2, 1)).toBe(draft);
    // Keys travel with their rule, so the editor's inputs keep their identity.
    expect(moved.rules[0].key).toBe(draft.rules[1].key);
  });

  it('adds, edits and removes rules without touching the original', () => {
    const draft = draftFromPricing(saved);
    const edited = updateRule(removeRule(addRule(draft), 0), 2, { path: '/news/*', price: '0.2' });
    expect(pricingInput(edited)).toEqual({
      default_price_usd: '0.001',
      rules: [
        { path: '/blog/free-*', price_usd: '0' },
        { path: '/*.pdf', price_usd: '0.05' },
        { path: '/news/*', price_usd: '0.2' },
      ],
    });
    expect(draft.rules).toHaveLength(3);
  });

  it('previews which rule wins: order decides, the default applies when none match', () => {
    const draft = draftFromPricing(saved);
    expect(previewPath(draft, '/blog/free-post?ref=x')).toEqual({
      ok: true,
      path: '/blog/free-post',
      priceUsd: '0.01',
      rule: 0,
      pattern: '/blog/*',
    });
    expect(previewPath(moveRule(draft, 1, -1), '/blog/free-post')).toMatchObject({
      ok: true,
      priceUsd: '0',
      rule: 0,
      pattern: '/blog/free-*',
    });
    expect(previewPath(draft, 'https://example.com/report.pdf')).toMatchObject({ ok: true, priceUsd: '0.05', rule: 2 });
    // `*` stays within one segment.
    expect(previewPath(draft, '/files/report.pdf')).toMatchObject({ ok: true, rule: null });
    expect(previewPath(draft, '/about')).toMatchObject({ ok: true, priceUsd: '0.001', rule: null, pattern: null });
  });

  it('says which rule makes the draft unusable instead of guessing', () => {
    const draft = draftFromPricing(saved);
    expect(previewPath(updateRule(draft, 1, { path: '/blog/**' }), '/x')).toEqual({
      ok: false,
      problem: expect.stringMatching(/^Rule 2: /),
    });
    expect(previewPath(updateRule(draft, 2, { price: '2' }), '/x')).toEqual({
      ok: false,
      problem: expect.stringMatching(/^Rule 3: .*1/),
    });
    expect(previewPath({ ...draft, defaultPrice: 'abc' }, '/x')).toEqual({
      ok: false,
      problem: expect.stringMatching(/^Default price: /),
    });
  });
});
