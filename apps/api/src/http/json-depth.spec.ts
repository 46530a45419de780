import { jsonDepthExceeds } from './json-depth';

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
