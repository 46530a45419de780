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
    expect(patternKey('/a%2A%3F%5B', lenient)).toBe('/a%2a%3f%5b');
    expect(patternKey('/%C3%89%2A', lenient)).toBe('/é%2a');
    // Escapes that are not UTF-8 stay as written (folded like any text).
    expect(patternKey('/%FF', lenient)).toBe('/%ff');
  });

  it('keep every code point one long', () => {
    expect(pathKey('/İx', lenient)).toBe('/İx');
    expect(pathKey('/ÉTÉ', lenient)).toBe('/été');
  });
});
