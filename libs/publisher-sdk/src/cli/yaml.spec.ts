import { parseYaml, YamlError } from './yaml';

describe('parseYaml (the pricing-file subset)', () => {
  it('reads a pricing file: nested mappings, lists of mappings, comments, quoted and plain scalars', () => {
    const text = [
      '# Crawlgate pricing',
      '---',
      'default_price_usd: "0.002"   # two tenths of a cent',
      'rules:',
      '  - path: /articles/*',
      '    price_usd: 0.01',
      "  - path: '/it''s/#not-a-comment'",
      '    price_usd: "0"',
      '',
      '  -   path: /a#b',
      '      price_usd: 0',
    ].join('\n');
    expect(parseYaml(text)).toEqual({
      default_price_usd: '0.002',
      rules: [
        { path: '/articles/*', price_usd: 0.01 },
        { path: "/it's/#not-a-comment", price_usd: '0' },
        { path: '/a#b', price_usd: 0 },
      ],
    });
  });

  it('accepts a list at its key’s indentation, CRLF line ends and empty collections', () => {
    expect(parseYaml('rules:\r\n- path: /x\r\n  price_usd: 1\r\nother: []\r\nmore: {}\r\n')).toEqual({
      rules: [{ path: '/x', price_usd: 1 }],
      other: [],
      more: {},
    });
  });

  it('resolves plain scalars as YAML 1.2’s core schema does', () => {
    expect(
      parseYaml('a: ~\nb: null\nc: true\nd: False\ne: -1.5e-3\nf: 007\ng: .5\nh: 0.005\ni: 1.2.3\nj: yes\nk:\n'),
    ).toEqual({
      a: null,
      b: null,
      c: true,
      d: false,
      e: -0.0015,
      f: 7,
      g: 0.5,
      h: 0.005,
      i: '1.2.3',
      j: 'yes',
      k: null,
    });
  });

  it('reads nested lists, list scalars, double-quoted escapes and a bare document scalar', () => {
    expect(parseYaml('- - a\n  - b\n- "x\\ty\\u00e9"\n-\n  k: v\n')).toEqual([['a', 'b'], 'x\tyé', { k: 'v' }]);
    expect(parseYaml('just text')).toBe('just text');
    expect(parseYaml('# only a comment\n')).toBeNull();
  });

  it('keeps __proto__ a plain key', () => {
    const value = parseYaml('__proto__:\n  polluted: true\n') as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(['__proto__']);
  });

  it.each([
    ['a: 1\n\tb: 2', 2, /tabs/],
    ['a: 1\na: 2', 2, /Duplicate key "a"/],
    ['a:\n  b: 1\n c: 2', 3, /indentation/],
    ['a: &anchor 1', 1, /not supported/],
    ['a: [1, 2]', 1, /flow collections/],
    ['a: |\n  text', 1, /block scalars/],
    ['a: "open', 1, /Unterminated/],
    ['a: b: c', 1, /mapping inside a value/],
    ['a: "x" y', 1, /after a quoted string/],
    ['a: 1\n- b', 2, /list item where a key/],
    ['a: 1\n---\nb: 2', 2, /one document/],
    ['a: "\\x41"', 1, /escape/],
  ])('rejects %j at line %i', (text, line, message) => {
    let error: unknown;
    try {
      parseYaml(text);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(YamlError);
    expect(error).toMatchObject({ line, message: expect.stringMatching(message) });
  });
});
