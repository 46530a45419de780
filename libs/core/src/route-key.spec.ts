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

  it('fold a path’s case and drop a trailing slash; a pattern only loses its slash (the compiler folds it)', () => {
    expect(pathKey('/Premium/A/', lenient)).toBe('/premium/a');
    expect(patternKey('/Premium/*/', lenient)).toBe('/Premium/*');
    expect(pathKey('/', lenient)).toBe('/');
    expect(pathKey('/A/', { caseSensitive: true, strictTrailingSlash: false })).toBe('/A');
    expect(pathKey('/A/', { caseSensitive: false, strictTrailingSlash: true })).toBe('/a/');
    // Escapes that stay escaped keep their upper-case hex, as requestPath() writes paths.
    expect(pathKey('/A%2Fb', lenient)).toBe('/a%2Fb');
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
