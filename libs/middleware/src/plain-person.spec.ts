import { ALWAYS_FREE_PATHS } from './bots/free-paths';
import { PAY_JSON_PATH, type CrawlgateRequest } from './crawlgate';
import { DEFAULT_LICENSE_PATH } from './license';
import { AGENT_HEADERS, isPlainPersonRequest } from './plain-person';
import { nodeHeaders, type HeaderRecord } from './request-headers';

const BROWSER =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)';

/** A request as the Node adapters hand it over: Node's lower-case header record, marked. */
const request = (url: string, headers: HeaderRecord = {}, routedUrl?: string): CrawlgateRequest => ({
  method: 'GET',
  url,
  routedUrl,
  headers: nodeHeaders({ host: 'example.com', 'user-agent': BROWSER, ...headers }),
});

describe('isPlainPersonRequest', () => {
  it.each(['/', '/article/42', '/a/b/', '/a-b_c~d/E9?x=1&y=a.b%2F;c', '/post/1?'])(
    'recognises a browser on %s',
    (url) => {
      expect(isPlainPersonRequest(request(url), undefined)).toBe(true);
    },
  );

  it.each([...AGENT_HEADERS])('leaves a request with %s to the full decision, even empty', (name) => {
    expect(isPlainPersonRequest(request('/article/42', { [name]: 'x' }), undefined)).toBe(false);
    expect(isPlainPersonRequest(request('/article/42', { [name]: '' }), undefined)).toBe(false);
  });

  it.each([
    ['a crawler', GPTBOT],
    ['an empty User-Agent', ''],
    ['a self-declared crawler', `${BROWSER} ExampleBot/1.0`],
    ['a script', 'curl/8.5.0'],
  ])('leaves %s to the full decision', (_, userAgent) => {
    expect(isPlainPersonRequest(request('/article/42', { 'user-agent': userAgent }), undefined)).toBe(false);
  });

  it('leaves a request with no User-Agent, or several, to the full decision', () => {
    const none = request('/article/42');
    delete none.headers['user-agent'];
    expect(isPlainPersonRequest(none, undefined)).toBe(false);
    expect(isPlainPersonRequest(request('/article/42', { 'user-agent': [BROWSER, BROWSER] }), undefined)).toBe(false);
  });

  it('leaves a header record not known to be lower-case to the full decision', () => {
    const handBuilt = { method: 'GET', url: '/article/42', headers: { 'User-Agent': BROWSER } };
    expect(isPlainPersonRequest(handBuilt, undefined)).toBe(false);
    // Its X-Payment under another spelling is what the full decision would read.
    const spelled = { method: 'GET', url: '/article/42', headers: { 'user-agent': BROWSER, 'X-Payment': 'x' } };
    expect(isPlainPersonRequest(spelled, undefined)).toBe(false);
  });

  it.each([
    '/article/42.html',
    '/./article/42',
    '/a/../b',
    '//article/42',
    '/article//42',
    '/article/%34%32',
    '/article/42;jsessionid=1',
    '/article\\42',
    '/article/42#x',
    'http://example.com/article/42',
    '*',
    '',
    '/artícle/42',
    '/article 42',
  ])('leaves the target %j, which some reading may take for another path, to the full decision', (url) => {
    expect(isPlainPersonRequest(request(url), undefined)).toBe(false);
  });

  it('leaves a routed URL that is not plain to the full decision, and takes one that is', () => {
    expect(isPlainPersonRequest(request('/article/42', {}, '/article/42.json'), undefined)).toBe(false);
    expect(isPlainPersonRequest(request('/de/article/42', {}, '/article/42'), undefined)).toBe(true);
  });

  it('leaves the path the gate answers itself to the full decision, with or without a query', () => {
    expect(isPlainPersonRequest(request('/license'), '/license')).toBe(false);
    expect(isPlainPersonRequest(request('/license?x=1'), '/license')).toBe(false);
    expect(isPlainPersonRequest(request('/de/license', {}, '/license'), '/license')).toBe(false);
    expect(isPlainPersonRequest(request('/license/'), '/license')).toBe(true); // not the license's path to the full decision either
  });

  it('never takes a free path or one the gate answers: every one has a dot', () => {
    const examples = [
      ...ALWAYS_FREE_PATHS.map((path) => path.replace('*', '')),
      PAY_JSON_PATH,
      DEFAULT_LICENSE_PATH,
      '/robots.txt',
      '/sitemap_index.xml',
    ];
    for (const path of examples) expect([path, isPlainPersonRequest(request(path), undefined)]).toEqual([path, false]);
  });

  it('takes as plain exactly the targets of the grammar "/", segments of [A-Za-z0-9_~-] split by single slashes, then any query', () => {
    // The grammar as a regular expression; the gate reads it with a loop over the codes.
    const grammar = /^\/(?:[A-Za-z0-9_~-]+\/)*[A-Za-z0-9_~-]*(?:\?|$)/;
    const plainCodes = ['/', '/', 'a', 'Z', '0', '_', '~', '-'];
    // Besides the usual suspects, each code just outside a range the segments allow.
    const otherCodes = [
      '.',
      '?',
      '%',
      ';',
      '\\',
      '#',
      ' ',
      'é',
      ':',
      '@',
      '+',
      ',',
      '[',
      '^',
      '`',
      '{',
      '}',
      '\x7f',
      '\ud83d',
    ];
    let seed = 42;
    const random = (below: number) => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31), seed % below);
    const seen = { plain: 0, other: 0 };
    for (let i = 0; i < 20_000; i++) {
      let url = random(8) === 0 ? '' : '/';
      for (let length = random(9); length > 0; length--) {
        const codes = random(6) === 0 ? otherCodes : plainCodes;
        url += codes[random(codes.length)];
      }
      const plain = isPlainPersonRequest(request(url), undefined);
      expect([url, plain]).toEqual([url, grammar.test(url)]);
      seen[plain ? 'plain' : 'other']++;
    }
    // Both answers were tried many times over.
    expect(Math.min(seen.plain, seen.other)).toBeGreaterThan(1_000);
  });
});
