import { checkStaticFiles, DEFAULT_STATIC_FILES, staticFileSpellings } from './static-files';

describe('staticFileSpellings', () => {
  it('reads a directory URL as its index file, and the index file as its directory, by default', () => {
    // A path's twin with or without its trailing slash is priceOfSpelling's to read, not listed here.
    expect(staticFileSpellings('/docs/secret/', DEFAULT_STATIC_FILES)).toEqual(['/docs/secret/index.html']);
    expect(staticFileSpellings('/docs/secret/index.html', DEFAULT_STATIC_FILES)).toEqual([
      '/docs/secret/',
      '/docs/secret',
    ]);
    // A path with no slash at its end may be a directory that Fastify answers with its index.
    expect(staticFileSpellings('/docs/secret', DEFAULT_STATIC_FILES)).toEqual(['/docs/secret/index.html']);
    expect(staticFileSpellings('/', DEFAULT_STATIC_FILES)).toEqual(['/index.html']);
    expect(staticFileSpellings('/index.html', DEFAULT_STATIC_FILES)).toEqual(['/']);
  });

  it('reads a name with no extension as each configured one, and a file with one as its name without', () => {
    const files = checkStaticFiles({ extensions: ['html', '.htm'] });
    expect(staticFileSpellings('/docs/report', files)).toEqual(
      expect.arrayContaining(['/docs/report.html', '/docs/report.htm', '/docs/report/index.html']),
    );
    expect(staticFileSpellings('/docs/report.html', files)).toContain('/docs/report');
    expect(staticFileSpellings('/docs/secret/index', files)).toEqual(
      expect.arrayContaining(['/docs/secret/index.html', '/docs/secret/', '/docs/secret']),
    );
    // A name with a dot is a file of its own: notes.txt is not read as notes.txt.html.
    expect(staticFileSpellings('/docs/notes.txt', files)).not.toContain('/docs/notes.txt.html');
    // A name that is the extension alone is no file with it.
    expect(staticFileSpellings('/docs/.html', files)).not.toContain('/docs/');
  });

  it('reads a precompressed sibling as every URL of the file it compresses', () => {
    expect(staticFileSpellings('/docs/report.html.gz', DEFAULT_STATIC_FILES)).toContain('/docs/report.html');
    expect(staticFileSpellings('/docs/report.html.br', DEFAULT_STATIC_FILES)).toContain('/docs/report.html');
    expect(staticFileSpellings('/docs/secret/index.html.zst', DEFAULT_STATIC_FILES)).toEqual(
      expect.arrayContaining(['/docs/secret/index.html', '/docs/secret/', '/docs/secret']),
    );
    const files = checkStaticFiles({ extensions: ['html'], precompressed: ['.gz'] });
    expect(staticFileSpellings('/docs/report.html.gz', files)).toEqual(
      expect.arrayContaining(['/docs/report.html', '/docs/report']),
    );
    expect(staticFileSpellings('/docs/report.html.br', files)).not.toContain('/docs/report.html');
    // The compressed file's own URLs, not the files its name might be read as: archive.gz compresses archive.
    expect(staticFileSpellings('/docs/archive.gz', files)).not.toContain('/docs/archive.html');
    expect(staticFileSpellings('/docs/archive.gz', files)).toContain('/docs/archive');
    // One suffix only, and a name that is the suffix alone compresses nothing.
    expect(staticFileSpellings('/docs/a.html.gz.gz', files)).not.toContain('/docs/a.html');
    expect(staticFileSpellings('/docs/.gz', files)).not.toContain('/docs/');
  });

  it('compares index names, extensions and suffixes case-blind, as a case-insensitive disk serves them', () => {
    const files = checkStaticFiles({ extensions: ['html'] });
    expect(staticFileSpellings('/docs/report.html.GZ', files)).toContain('/docs/report.html');
    expect(staticFileSpellings('/docs/report.html.Br', files)).toContain('/docs/report.html');
    expect(staticFileSpellings('/docs/report.html.z\u017ft', files)).toContain('/docs/report.html'); // ſ folds to s
    expect(staticFileSpellings('/dsecret/INDEX.HTML', files)).toEqual(
      expect.arrayContaining(['/dsecret/', '/dsecret']),
    );
    expect(staticFileSpellings('/dsecret/INDEX.HTML.gz', files)).toContain('/dsecret/');
    expect(staticFileSpellings('/pages/report.HTML', files)).toContain('/pages/report');
    // A directory named like an index file is one: no index file looked for under it.
    expect(staticFileSpellings('/docs/Index.html', files)).not.toContain('/docs/Index.html/index.html');
  });

  it('spells nothing more with no index, extension or precompressed suffix', () => {
    const none = checkStaticFiles({ index: [], extensions: [], precompressed: [] });
    expect(staticFileSpellings('/docs/a', none)).toEqual([]);
    expect(staticFileSpellings('/docs/a.gz', none)).toEqual([]);
  });

  it('refuses index names and extensions that are not file names', () => {
    for (const name of ['', '.', '..', 'a/b', '../x', 'a?b', 'a#b', 'a%2fb', 'a b'])
      expect(() => checkStaticFiles({ index: [name] })).toThrow(/not a file name/);
    expect(() => checkStaticFiles({ extensions: ['ht/ml'] })).toThrow(/not a file name/);
  });
});
