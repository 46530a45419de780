import fc from 'fast-check';
import { decodePathEscapes, requestPath } from './request-path';

// Strings made of the characters that matter to URL parsing and percent-decoding.
const urlish = fc.string({
  unit: fc.constantFrom(
    '/',
    '\\',
    '?',
    '#',
    '%',
    '.',
    ':',
    '@',
    '[',
    ']',
    ' ',
    'a',
    'F',
    '2',
    '5',
    'C',
    '3',
    'é',
    '😀',
    'http://',
    '%2F',
    '%2e',
    '%C3',
    '%A9',
    '%FF',
  ),
  maxLength: 30,
});
// URL-ish text with control characters and lone surrogates, raw and percent-encoded.
const controlish = fc.string({
  unit: fc.constantFrom(
    '/',
    'a',
    ' ',
    'http://',
    '%00',
    '%0A',
    '%1F',
    '%7F',
    '%C2%85',
    '\u0000',
    '\u0085',
    '\u007f',
    '\ud800',
    '\udc00',
    '\t',
  ),
  maxLength: 20,
});
// fc.webUrl() is slow to generate: fewer runs keep the suite fast.
const URL_RUNS = { numRuns: 40 };

describe('requestPath', () => {
  it.each([
    ['', '/'],
    ['/', '/'],
    ['/blog/a', '/blog/a'],
    ['/blog/a?x=1', '/blog/a'],
    ['/blog/a#top', '/blog/a'],
    ['/blog/a?x=1#top', '/blog/a'],
    ['?x=1', '/'],
    ['#top', '/'],
    ['https://example.com', '/'],
    ['https://example.com/blog/a?x=1', '/blog/a'],
    ['http://user:pw@example.com:8080/a/b/', '/a/b/'],
    ['blog/a', '/blog/a'],
  ])('reads %j as %j', (input, expected) => {
    expect(requestPath(input)).toBe(expected);
  });

  it('resolves dot segments, encoded ones too', () => {
    expect(requestPath('/a/../b')).toBe('/b');
    expect(requestPath('/a/./b/.')).toBe('/a/b/');
    expect(requestPath('/a/%2e%2E/b')).toBe('/b');
    expect(requestPath('/a/.%2e/b')).toBe('/b');
    expect(requestPath('/../../etc')).toBe('/etc');
    expect(requestPath('https://example.com/paid/../free')).toBe('/free');
  });

  it('reads a backslash as a slash, as browsers do for http URLs', () => {
    expect(requestPath('/a\\b')).toBe('/a/b');
    expect(requestPath('\\a')).toBe('/a');
  });

  it('reads input starting with "/" as a path, never as a protocol-relative URL', () => {
    expect(requestPath('//evil.example/paid/x')).toBe('/evil.example/paid/x');
    expect(requestPath('/\\evil.example/x')).toBe('/evil.example/x');
    expect(requestPath('//')).toBe('/');
  });

  it('collapses runs of slashes', () => {
    expect(requestPath('/paid//x')).toBe('/paid/x');
    expect(requestPath('///a////b/')).toBe('/a/b/');
    expect(requestPath('https://example.com//a//')).toBe('/a/');
  });

  it('keeps a trailing slash', () => {
    expect(requestPath('/blog/')).toBe('/blog/');
    expect(requestPath('/blog')).toBe('/blog');
  });

  it('percent-decodes, so every spelling of a character reads the same', () => {
    expect(requestPath('/caf%C3%A9')).toBe('/café');
    expect(requestPath('/caf%c3%a9')).toBe('/café');
    expect(requestPath('/café')).toBe('/café');
    expect(requestPath('/a b')).toBe('/a b');
    expect(requestPath('/a%20b')).toBe('/a b');
    expect(requestPath('/%41')).toBe('/A');
    expect(requestPath('/a%3Fb%23c')).toBe('/a?b#c');
    expect(requestPath('/%F0%9F%98%80')).toBe('/😀');
    expect(requestPath('/%2A')).toBe('/*');
  });

  it('keeps an encoded slash encoded: it never makes a new segment', () => {
    expect(requestPath('/a%2Fb')).toBe('/a%2Fb');
    expect(requestPath('/a%2fb')).toBe('/a%2Fb');
    expect(requestPath('/x/%2E%2E%2Fy')).toBe('/x/..%2Fy');
  });

  it('keeps an encoded percent sign encoded, so "%252F" never reads as an encoded slash', () => {
    expect(requestPath('/a%252Fb')).toBe('/a%252Fb');
    expect(requestPath('/a%252fb')).toBe('/a%252fb');
    expect(requestPath('/100%25')).toBe('/100%25');
    expect(requestPath('/a%252Fb')).not.toBe(requestPath('/a%2Fb'));
  });

  it('keeps bytes that are not UTF-8 escaped, in upper case', () => {
    expect(requestPath('/a%FFb')).toBe('/a%FFb');
    expect(requestPath('/a%ffb')).toBe('/a%FFb');
    expect(requestPath('/%E2%82')).toBe('/%E2%82');
    expect(requestPath('/%E2%82%41')).toBe('/%E2%82A');
    expect(requestPath('/%80%C3%A9')).toBe('/%80é');
    expect(requestPath('/%C0%AF')).toBe('/%C0%AF');
    expect(requestPath('/%ED%A0%80')).toBe('/%ED%A0%80');
  });

  it('keeps control characters escaped, so no path holds one (PostgreSQL refuses NUL in text)', () => {
    expect(requestPath('/a%00b')).toBe('/a%00b');
    expect(requestPath('/%0a%0D%1f%7F')).toBe('/%0A%0D%1F%7F');
    expect(requestPath('/%C2%85%C2%9F%C2%A0')).toBe('/%C2%85%C2%9F\u00a0');
    expect(requestPath('http://a b/x\u0000y\u0085')).toBe('/http:/a b/x%00y%C2%85');
    expect(requestPath('http://a b/\ud800x')).toBe('/http:/a b/\ufffdx');
  });

  it('keeps invalid escapes as written', () => {
    expect(requestPath('/a%zz')).toBe('/a%zz');
    expect(requestPath('/a%')).toBe('/a%');
    expect(requestPath('/a%4')).toBe('/a%4');
    expect(requestPath('/a%%41')).toBe('/a%A');
  });

  it('reads opaque or unparsable URLs as path text, never as "/"', () => {
    expect(requestPath('mailto:someone')).toBe('/mailto:someone');
    expect(requestPath('javascript:alert(1)')).toBe('/javascript:alert(1)');
    expect(requestPath('http://[::1')).toBe('/http:/[::1');
    expect(requestPath('http://a b/x?q#f')).toBe('/http:/a b/x');
    expect(requestPath('http://a b')).toBe('/http:/a b');
    expect(requestPath('http://%zz/x')).toBe('/http:/%zz/x');
  });

  it('never throws and always returns a path', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), urlish, controlish), (input) => {
        const path = requestPath(input);
        expect(path.startsWith('/')).toBe(true);
        expect(path).not.toMatch(/\/\//);
        expect(path).not.toMatch(/[\p{Cc}\p{Cs}]/u);
      }),
      { numRuns: 1000 },
    );
    expect(requestPath(undefined as unknown as string)).toBe('/');
  });

  it('is idempotent on the paths it returns that hold no "?", "#", "%" or "\\"', () => {
    fc.assert(
      fc.property(fc.webPath(), (input) => {
        const path = requestPath(input);
        if (!/[?#%\\]/.test(path)) expect(requestPath(path)).toBe(path);
      }),
      URL_RUNS,
    );
  });

  it('reads a URL and its path the same', () => {
    fc.assert(
      fc.property(fc.webUrl({ withQueryParameters: true, withFragments: true }), (url) => {
        const { pathname, search, hash } = new URL(url);
        expect(requestPath(pathname + search + hash)).toBe(requestPath(url));
      }),
      URL_RUNS,
    );
  });
});

describe('decodePathEscapes', () => {
  it('leaves text without "%" alone', () => {
    expect(decodePathEscapes('/a b/c')).toBe('/a b/c');
  });

  it('decodes runs of escapes as UTF-8', () => {
    expect(decodePathEscapes('/%C3%A9%2F%25x')).toBe('/é%2F%25x');
  });
});
