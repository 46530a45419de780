import { closedUnderCase, foldCase, foldCodePoint } from './case-fold';

const cp = (c: string) => c.codePointAt(0)!;
const accepts = ({ negated, ranges }: { negated: boolean; ranges: number[] }, c: string) => {
  let inside = false;
  for (let i = 0; i < ranges.length; i += 2) inside ||= cp(c) >= ranges[i] && cp(c) <= ranges[i + 1];
  return inside !== negated;
};
const range = (first: string, last: string) => [cp(first), cp(last)];

describe('foldCodePoint', () => {
  it.each([
    ['A', 'a'],
    ['a', 'a'],
    ['\u212A', 'k'], // Kelvin sign
    ['\u017F', 's'], // long s
    ['µ', 'μ'],
    ['ς', 'σ'],
    ['İ', 'İ'], // its lower case is two code points: kept
    ['7', '7'],
  ])('folds %j to %j', (c, folded) => expect(foldCodePoint(c)).toBe(folded));

  it('changes no code point above the last one the class closure scans (1FFFF)', () => {
    const changed: number[] = [];
    for (let x = 0x20000; x <= 0x10ffff; x++) {
      const c = String.fromCodePoint(x);
      if (foldCodePoint(c) !== c) changed.push(x);
    }
    expect(changed).toEqual([]);
  });
});

describe('foldCase', () => {
  it('keeps "İ" one letter, or reads it as Fastify does ("i" and a combining dot above) when asked', () => {
    expect(foldCase('/İstanbul')).toBe('/İstanbul');
    expect(foldCase('/İSTANBUL', true)).toBe('/i\u0307stanbul');
    expect(foldCase('/A%2fB')).toBe('/a%2Fb');
  });
});

describe('closedUnderCase', () => {
  it('adds to a class the folds of its letters, and nothing else', () => {
    const upper = closedUnderCase({ negated: false, ranges: range('A', 'Z') }, 'any-spelling');
    for (const c of ['a', 'k', 'z', 'A']) expect([c, accepts(upper, c)]).toEqual([c, true]);
    for (const c of ['0', '_', 'é', '/']) expect([c, accepts(upper, c)]).toEqual([c, false]);
    // The Kelvin sign's fold is "k", and "[\u212A]" holds it for a keyed path.
    expect(accepts(closedUnderCase({ negated: false, ranges: range('\u212A', '\u212A') }, 'any-spelling'), 'k')).toBe(
      true,
    );
    // A class without letters is as it was.
    const digits = { negated: false, ranges: range('0', '9') };
    expect(closedUnderCase(digits, 'any-spelling')).toEqual(digits);
    expect(closedUnderCase(digits, 'regexp')).toEqual(digits);
  });

  it('keeps a code point out of a negated class only when every spelling that folds to it is out', () => {
    // "[!A-Z]": "a" stands for "a" too, which the class takes: in.
    expect(accepts(closedUnderCase({ negated: true, ranges: range('A', 'Z') }, 'any-spelling'), 'a')).toBe(true);
    // "[!a-z]": "a" stands for "A", which the class takes: in; so is every letter, "k" and "s" included.
    const notLower = closedUnderCase({ negated: true, ranges: range('a', 'z') }, 'any-spelling');
    for (const c of ['a', 'k', 's', 'z']) expect([c, accepts(notLower, c)]).toEqual([c, true]);
    expect(accepts(notLower, '/')).toBe(true); // the matcher refuses "/" whatever a class says
    // Every spelling of "k" refused, and of "s" but the long s: "k" stays out, "s" comes in.
    const ks = closedUnderCase(
      {
        negated: true,
        ranges: [
          ...range('k', 'k'),
          ...range('K', 'K'),
          cp('\u212A'),
          cp('\u212A'),
          ...range('s', 's'),
          ...range('S', 'S'),
        ],
      },
      'any-spelling',
    );
    expect(accepts(ks, 'k')).toBe(false);
    expect(accepts(ks, 's')).toBe(true);
    expect(accepts(ks, 'x')).toBe(true);
  });

  it('read as a RegExp with the i flag reads it, refuses every code point one of whose spellings it refuses', () => {
    const notUpper = closedUnderCase({ negated: true, ranges: range('A', 'Z') }, 'regexp');
    for (const c of ['a', 'd', 'k', 's', 'z']) expect([c, accepts(notUpper, c)]).toEqual([c, false]);
    for (const c of ['1', '_', 'é']) expect([c, accepts(notUpper, c)]).toEqual([c, true]);
    // A positive class reads the same both ways.
    expect(closedUnderCase({ negated: false, ranges: range('Z', 'z') }, 'regexp')).toEqual(
      closedUnderCase({ negated: false, ranges: range('Z', 'z') }, 'any-spelling'),
    );
  });

  it('reads overlapping ranges as their union', () => {
    const overlapping = closedUnderCase(
      {
        negated: true,
        ranges: [...range('a', 'm'), ...range('c', 'z'), ...range('A', 'Z')],
      },
      'any-spelling',
    );
    expect(accepts(overlapping, 'd')).toBe(false);
    expect(accepts(overlapping, '1')).toBe(true);
  });
});
