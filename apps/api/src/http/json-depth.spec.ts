import { jsonDepthExceeds, jsonWidthProblem, MAX_JSON_ENTRIES, MAX_JSON_ITEMS, MAX_JSON_KEYS } from './json-depth';

describe('jsonDepthExceeds', () => {
  const nested = (depth: number) => JSON.parse('['.repeat(depth) + ']'.repeat(depth));
  it('accepts flat and moderately nested values', () => {
    expect(jsonDepthExceeds(null)).toBe(false);
    expect(jsonDepthExceeds({ a: [1, { b: 'c' }] })).toBe(false);
    expect(jsonDepthExceeds(nested(32))).toBe(false);
  });
  it('flags values nested past the limit, however deep, without recursion', () => {
    expect(jsonDepthExceeds(nested(33))).toBe(true);
    expect(jsonDepthExceeds(nested(100_000))).toBe(true);
    expect(jsonDepthExceeds({ a: { b: { c: 1 } } }, 2)).toBe(true);
  });
});

describe('jsonWidthProblem', () => {
  const wide = (keys: number) => Object.fromEntries(Array.from({ length: keys }, (_, i) => [`k${i}`, i]));
  it('takes the widest bodies the API has: 1,000 rules, 500 bots, 1,000 counts', () => {
    expect(jsonWidthProblem({ rules: Array.from({ length: 1000 }, () => ({ path: '/a', price_usd: '1' })) })).toBe(
      undefined,
    );
    expect(jsonWidthProblem({ bots: wide(500) })).toBe(undefined);
  });
  it('names the first list or object past its width, or the body past its entries, without recursion', () => {
    expect(jsonWidthProblem({ rules: Array(1001).fill({}) })).toMatchObject({
      loc: ['body', 'rules'],
      type: 'too_long',
      ctx: { max_length: MAX_JSON_ITEMS },
    });
    expect(jsonWidthProblem({ payment: { payload: wide(MAX_JSON_KEYS + 1) } })).toMatchObject({
      loc: ['body', 'payment', 'payload'],
      type: 'too_long',
    });
    const many = { a: Array.from({ length: 30 }, () => wide(900)) };
    expect(jsonWidthProblem(many)).toMatchObject({
      loc: ['body'],
      type: 'too_long',
      ctx: { max_length: MAX_JSON_ENTRIES },
    });
  });
});

describe('jsonWidthProblem, where it names', () => {
  it('quotes a long field name only in part', () => {
    const long = 'k'.repeat(200_000);
    const problem = jsonWidthProblem({ [long]: Array(1001).fill(0) });
    expect(problem?.loc).toEqual(['body', `${'k'.repeat(100)}…`]);
  });
});
