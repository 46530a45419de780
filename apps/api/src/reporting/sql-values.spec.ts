import { toBigInt, toCount } from './sql-values';

describe('raw SQL values', () => {
  it.each([
    [12n, 12n],
    [12, 12n],
    ['9007199254740993', 9007199254740993n],
    [{ toString: () => '42' }, 42n], // a Decimal
    [null, 0n],
    [undefined, 0n],
  ])('reads %p as %p', (value, expected) => {
    expect(toBigInt(value)).toBe(expected);
  });

  it.each([['1.5'], [1.5], ['abc'], [Number.MAX_SAFE_INTEGER + 2]])('refuses %p rather than round it', (value) => {
    expect(() => toBigInt(value)).toThrow(TypeError);
  });

  it('reads counts as numbers', () => {
    expect(toCount('7')).toBe(7);
  });
});
