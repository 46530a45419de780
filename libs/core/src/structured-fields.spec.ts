import {
  parseSfDictionary,
  parseSfItem,
  serializeSfDictionary,
  serializeSfInnerList,
  SF_LIMITS,
  type SfInnerList,
} from './structured-fields';

describe('parseSfDictionary', () => {
  it('reads a Signature-Input and serializes it back canonically', () => {
    const text =
      'sig1=("@authority" "signature-agent";key="sig1");created=1700000000;expires=1700000060;keyid="abc";nonce="n";tag="web-bot-auth"';
    const dictionary = parseSfDictionary(text)!;
    const sig1 = dictionary.get('sig1') as SfInnerList;
    expect(sig1.kind).toBe('inner-list');
    expect(sig1.items.map((item) => item.value)).toEqual([
      { type: 'string', value: '@authority' },
      { type: 'string', value: 'signature-agent' },
    ]);
    expect(sig1.items[1].params.get('key')).toEqual({ type: 'string', value: 'sig1' });
    expect(sig1.params.get('created')).toEqual({ type: 'integer', value: 1700000000 });
    expect(serializeSfDictionary(dictionary)).toBe(text);
  });

  it('re-serializes extra white space away and keeps member order', () => {
    const dictionary = parseSfDictionary('  b=( "x"   "y" );p=1 ,\ta=?0, c  ')!;
    expect([...dictionary.keys()]).toEqual(['b', 'a', 'c']);
    expect(serializeSfInnerList(dictionary.get('b') as SfInnerList)).toBe('("x" "y");p=1');
    expect(serializeSfDictionary(dictionary)).toBe('b=("x" "y");p=1, a=?0, c');
  });

  it('reads byte sequences, tokens, decimals, negative numbers, booleans and dates', () => {
    const dictionary = parseSfDictionary('s=:AQID:, t=web-bot/auth:1, d=-1.5, b=?1, at=@1700000000, e=::')!;
    expect(dictionary.get('s')).toMatchObject({ value: { type: 'bytes', value: new Uint8Array([1, 2, 3]) } });
    expect(dictionary.get('t')).toMatchObject({ value: { type: 'token', value: 'web-bot/auth:1' } });
    expect(dictionary.get('d')).toMatchObject({ value: { type: 'decimal', value: -1.5 } });
    expect(dictionary.get('b')).toMatchObject({ value: { type: 'boolean', value: true } });
    expect(dictionary.get('at')).toMatchObject({ value: { type: 'date', value: 1700000000 } });
    expect(dictionary.get('e')).toMatchObject({ value: { type: 'bytes', value: new Uint8Array() } });
  });

  it('keeps the last value of a repeated key in its first place (RFC 8941 4.2.2)', () => {
    expect(serializeSfDictionary(parseSfDictionary('a=1, b=2, a=3')!)).toBe('a=3, b=2');
  });

  it.each([
    ['a trailing comma', 'a=1,'],
    ['an upper-case key', 'Sig1=("@authority")'],
    ['a key starting with a digit', '1a=1'],
    ['an unterminated string', 'a="abc'],
    ['a bad escape', 'a="\\n"'],
    ['a control character in a string', 'a="a\tb"'],
    ['a non-ASCII character in a string', 'a="é"'],
    ['an unterminated inner list', 'a=("x" "y"'],
    ['items not separated by a space', 'a=("x""y")'],
    ['a 16-digit integer', 'a=1234567890123456'],
    ['a decimal with four fraction digits', 'a=1.2345'],
    ['a decimal ending in a point', 'a=1.'],
    ['bytes that are not base64', 'a=:AQ*D:'],
    ['bytes with bad padding', 'a=:AQI=A:'],
    ['bytes with non-canonical trailing bits', 'a=:AQJ=:'],
    ['an unterminated byte sequence', 'a=:AQID'],
    ['a bad boolean', 'a=?2'],
    ['a display string (not supported)', 'a=%"x"'],
    ['garbage after a member', 'a=1 b=2'],
    ['an empty member value', 'a='],
    ['a dictionary of lists', 'a=1;'],
  ])('refuses %s', (_what, text) => {
    expect(parseSfDictionary(text)).toBeNull();
  });

  it('refuses fields beyond its bounds', () => {
    expect(parseSfDictionary(`a="${'x'.repeat(SF_LIMITS.fieldLength)}"`)).toBeNull();
    expect(parseSfDictionary(Array.from({ length: SF_LIMITS.members + 1 }, (_, i) => `k${i}=1`).join(', '))).toBeNull();
    expect(
      parseSfDictionary(`a=(${Array.from({ length: SF_LIMITS.innerListItems + 1 }, () => '1').join(' ')})`),
    ).toBeNull();
    expect(
      parseSfDictionary(`a=1${Array.from({ length: SF_LIMITS.parameters + 1 }, (_, i) => `;p${i}`).join('')}`),
    ).toBeNull();
    expect(parseSfDictionary(Array.from({ length: SF_LIMITS.members }, (_, i) => `k${i}=1`).join(', '))).not.toBeNull();
  });

  it('counts repeated parameter keys and members as parsed, not as distinct keys (a;b=1;b=1;… in 8 KB)', () => {
    expect(parseSfDictionary(`a${';b=1'.repeat(SF_LIMITS.parameters + 1)}`)).toBeNull();
    expect(parseSfDictionary(`a${';b=1'.repeat(2000)}`)).toBeNull();
    expect(parseSfItem(`1${';b'.repeat(SF_LIMITS.parameters + 1)}`)).toBeNull();
    expect(parseSfDictionary(`a=("x"${';b'.repeat(SF_LIMITS.parameters + 1)})`)).toBeNull();
    expect(parseSfDictionary(Array.from({ length: SF_LIMITS.members + 1 }, () => 'a;b').join(','))).toBeNull();
    // At the bound, a repeated key still keeps its first place and its last value.
    expect(parseSfDictionary(`a${';b=1'.repeat(SF_LIMITS.parameters - 1)};b=2`)?.get('a')?.params).toEqual(
      new Map([['b', { type: 'integer', value: 2 }]]),
    );
    expect(
      parseSfDictionary(Array.from({ length: SF_LIMITS.members }, (_, i) => `a=${i}`).join(','))?.get('a'),
    ).toMatchObject({ value: { value: SF_LIMITS.members - 1 } });
  });

  it('unescapes a string made of escapes up to the field length', () => {
    const escapes = (SF_LIMITS.fieldLength - 4) / 2;
    expect(parseSfItem(`"${'\\"'.repeat(escapes)}"`)).toEqual({
      kind: 'item',
      value: { type: 'string', value: '"'.repeat(escapes) },
      params: new Map(),
    });
    expect(parseSfItem(`"${'\\\\'.repeat(escapes)}"`)?.value).toEqual({ type: 'string', value: '\\'.repeat(escapes) });
  });

  it('answers null, never throws, for odd input', () => {
    expect(parseSfDictionary(undefined as unknown as string)).toBeNull();
    expect(parseSfDictionary('')).toEqual(new Map());
  });
});

describe('parseSfItem', () => {
  it('reads a string item (the legacy Signature-Agent form)', () => {
    expect(parseSfItem('"https://chatgpt.com"')).toEqual({
      kind: 'item',
      value: { type: 'string', value: 'https://chatgpt.com' },
      params: new Map(),
    });
    expect(parseSfItem('"https://a.example";type=directory')?.params.get('type')).toEqual({
      type: 'token',
      value: 'directory',
    });
  });

  it('refuses a dictionary or trailing text', () => {
    expect(parseSfItem('sig1="https://a.example"')).toBeNull();
    expect(parseSfItem('"a" "b"')).toBeNull();
  });
});
