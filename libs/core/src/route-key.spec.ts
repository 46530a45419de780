import { keyings, pathKey, patternKey } from './route-key';

describe('keyings', () => {
  it('reads an unknown option both ways, and never lists the exact reading', () => {
    expect(keyings({})).toEqual([
      { caseSensitive: false, strictTrailingSlash: false },
      { caseSensitive: false, strictTrailingSlash: true },
      { caseSensitive: true, strictTrailingSlash: false },
    ]);
    expect(keyings({ caseSensitive: true })).toEqual([{ caseSensitive: true, strictTrailingSlash: false }]);
    expect(keyings({ caseSensitive: true, strictTrailingSlash: true })).toEqual([]);
  });
});

describe('pathKey and patternKey', () => {
  const lenient = { caseSensitive: false, strictTrailingSlash: false };

  it('fold case and drop a trailing slash alike on paths and patterns', () => {
    expect(pathKey('/Premium/A/', lenient)).toBe('/premium/a');
    expect(patternKey('/Premium/*/', lenient)).toBe('/premium/*');
    expect(pathKey('/', lenient)).toBe('/');
    expect(pathKey('/A/', { caseSensitive: true, strictTrailingSlash: false })).toBe('/A');
    expect(pathKey('/A/', { caseSensitive: false, strictTrailingSlash: true })).toBe('/a/');
  });

  it('unescape a pattern’s letters only: other escapes keep their meaning', () => {
    expect(patternKey('/%C3%89t%C3%A9', lenient)).toBe('/été');
    expect(patternKey('/a%2A%3F%5B', lenient)).toBe('/a%2A%3F%5B');
    expect(patternKey('/%C3%89%2A', lenient)).toBe('/é%2A');
    // Escapes that are not UTF-8 stay as written, upper-case hex kept, as requestPath() writes paths.
    expect(patternKey('/%ff', lenient)).toBe('/%FF');
    expect(pathKey('/A%2Fb', lenient)).toBe('/a%2Fb');
    // Inside a class "%" is a character: nothing there is unescaped.
    expect(patternKey('/x[%41]', lenient)).toBe('/x[%41]');
    expect(patternKey('/\\%41%42', lenient)).toBe('/\\%41b');
  });

  it('keep every code point one long, and fold letters a case-insensitive RegExp takes as one', () => {
    expect(pathKey('/İx', lenient)).toBe('/İx');
    expect(pathKey('/ÉTÉ', lenient)).toBe('/été');
    expect(pathKey('/µ', lenient)).toBe(pathKey('/Μ', lenient));
    expect(pathKey('/ς', lenient)).toBe(pathKey('/σ', lenient));
    // One code point at a time: a final Σ is not ς.
    expect(pathKey('/ΑΣ/x', lenient)).toBe(pathKey('/ασ/x', lenient));
  });
});
