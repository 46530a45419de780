import fc from 'fast-check';
import {
  base64urlDecode,
  base64urlDecodeUtf8,
  base64urlEncodeUtf8,
  base64urlEncode,
  decodeBase64Json,
  encodeBase64Json,
  utf8Decode,
  utf8Encode,
} from './base64url';

const bytes = (...values: number[]) => Uint8Array.from(values);
const ascii = (text: string) => utf8Encode(text);

describe('base64urlEncode', () => {
  it.each([
    ['', ''],
    ['f', 'Zg'],
    ['fo', 'Zm8'],
    ['foo', 'Zm9v'],
    ['foob', 'Zm9vYg'],
    ['fooba', 'Zm9vYmE'],
    ['foobar', 'Zm9vYmFy'],
  ])('encodes the RFC 4648 vector %j without padding', (input, expected) => {
    expect(base64urlEncode(ascii(input))).toBe(expected);
  });

  it('uses - and _ instead of + and /', () => {
    expect(base64urlEncode(bytes(0xfb, 0xff, 0xbf))).toBe('-_-_');
    expect(base64urlEncode(bytes(0xfb, 0xff))).toBe('-_8');
  });

  it('agrees with Node for any bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (data) => {
        expect(base64urlEncode(data)).toBe(Buffer.from(data).toString('base64url'));
      }),
    );
  });
});

describe('base64urlDecode', () => {
  it('round-trips any bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (data) => {
        expect(base64urlDecode(base64urlEncode(data))).toEqual(data);
      }),
    );
  });

  it('decodes the RFC 4648 vectors', () => {
    expect(utf8Decode(base64urlDecode('Zm9vYmE')!)).toBe('fooba');
    expect(base64urlDecode('')).toEqual(new Uint8Array(0));
    expect(base64urlDecode('-_-_')).toEqual(bytes(0xfb, 0xff, 0xbf));
  });

  it.each([
    ['padding', 'Zg=='],
    ['single padding', 'Zm8='],
    ['standard alphabet +', '+_8'],
    ['standard alphabet /', '-/8'],
    ['whitespace', 'Zm9v Yg'],
    ['trailing newline', 'Zm9v\n'],
    ['a dot', 'Zm9v.'],
    ['length % 4 == 1', 'Zm9vY'],
    ['a lone character', 'Z'],
    ['a non-ASCII character', 'Zm9é'],
    ['an astral character', 'Zm😀'],
  ])('rejects %s', (_, text) => {
    expect(base64urlDecode(text)).toBeNull();
  });

  it('rejects a non-canonical last character (unused low bits set)', () => {
    expect(base64urlDecode('Zg')).toEqual(ascii('f'));
    // "Zh".."Zv" decode to the same byte as "Zg" in lenient decoders.
    for (const last of 'hijklmnopqrstuv') expect(base64urlDecode('Z' + last)).toBeNull();
    expect(base64urlDecode('Zm8')).toEqual(ascii('fo'));
    expect(base64urlDecode('Zm9')).toBeNull();
    expect(base64urlDecode('-_9')).toBeNull();
  });

  it('never accepts a text other than the canonical encoding of its bytes', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'AZaz09-_=+/. '.split('')), maxLength: 12 }), (text) => {
        const decoded = base64urlDecode(text);
        if (decoded) expect(base64urlEncode(decoded)).toBe(text);
      }),
    );
  });
});

describe('utf8Encode / utf8Decode', () => {
  it('round-trips text, including astral characters', () => {
    expect(utf8Decode(utf8Encode('café 😀'))).toBe('café 😀');
    expect(utf8Encode('é')).toEqual(bytes(0xc3, 0xa9));
  });

  it.each([
    ['an invalid byte', [0xff]],
    ['a truncated sequence', [0xc3]],
    ['a stray continuation byte', [0x80]],
    ['an overlong encoding', [0xc0, 0xaf]],
    ['an encoded surrogate', [0xed, 0xa0, 0x80]],
  ])('returns null for %s', (_, values) => {
    expect(utf8Decode(bytes(...values))).toBeNull();
  });

  it('keeps a leading byte order mark', () => {
    expect(utf8Decode(bytes(0xef, 0xbb, 0xbf, 0x61))).toBe('\uFEFFa');
  });
});

describe('encodeBase64Json / decodeBase64Json', () => {
  const payment = { x402Version: 1, scheme: 'exact', network: 'base', payload: { note: 'café' } };

  it('writes standard padded base64 of the UTF-8 JSON, as Buffer does', () => {
    const encoded = encodeBase64Json(payment);
    expect(encoded).toBe(Buffer.from(JSON.stringify(payment), 'utf8').toString('base64'));
    expect(encodeBase64Json({})).toBe('e30=');
    expect(encodeBase64Json('ab')).toBe('ImFiIg==');
    expect(encodeBase64Json([1])).toBe('WzFd');
  });

  it('round-trips JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(decodeBase64Json(encodeBase64Json(value))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });

  it('writes the same text on a runtime without Buffer (btoa), lone surrogates included', () => {
    const values = [payment, 'a\ud800b', { ['é\udfff']: ['\u2028', 1] }];
    const withBuffer = values.map(encodeBase64Json);
    const original = Object.getOwnPropertyDescriptor(globalThis, 'Buffer')!;
    let withoutBuffer: string[];
    try {
      Object.defineProperty(globalThis, 'Buffer', { value: undefined, configurable: true });
      withoutBuffer = values.map(encodeBase64Json);
    } finally {
      Object.defineProperty(globalThis, 'Buffer', original);
    }
    expect(withoutBuffer).toEqual(withBuffer);
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const json = JSON.stringify(value);
        expect(encodeBase64Json(value)).toBe(btoa(String.fromCharCode(...new TextEncoder().encode(json))));
      }),
    );
  });

  it('uses the standard alphabet (+ and /)', () => {
    expect(encodeBase64Json('~~~')).toBe('In5+fiI=');
    expect(encodeBase64Json('???')).toBe('Ij8/PyI=');
    expect(decodeBase64Json('In5+fiI=')).toBe('~~~');
    expect(decodeBase64Json('Ij8/PyI=')).toBe('???');
  });

  it('accepts the text with or without padding', () => {
    expect(decodeBase64Json('e30=')).toEqual({});
    expect(decodeBase64Json('e30')).toEqual({});
    expect(decodeBase64Json('ImFiIg==')).toBe('ab');
    expect(decodeBase64Json('ImFiIg')).toBe('ab');
  });

  it.each([
    ['wrong padding length', 'ImFiIg='],
    ['too much padding', 'e30=='],
    ['three padding characters', 'ImFi===='],
    ['padding in the middle', 'e3=0'],
    ['the url-safe alphabet', 'In5-fiI='],
    ['whitespace', ' e30='],
    ['a non-canonical ending', 'e31='],
    ['invalid JSON', Buffer.from('{nope').toString('base64')],
    ['invalid UTF-8', Buffer.from([0x22, 0xff, 0x22]).toString('base64')],
    ['an empty text', ''],
  ])('returns undefined for %s', (_, text) => {
    expect(decodeBase64Json(text)).toBeUndefined();
  });

  it('returns undefined for a non-string', () => {
    expect(decodeBase64Json(undefined as unknown as string)).toBeUndefined();
  });

  it('refuses values without a JSON form', () => {
    expect(() => encodeBase64Json(undefined)).toThrow(TypeError);
    expect(() => encodeBase64Json(() => 1)).toThrow(TypeError);
    expect(() => encodeBase64Json(1n)).toThrow(TypeError);
  });
});

describe('base64urlDecodeUtf8', () => {
  const reference = (text: string) => {
    const decoded = base64urlDecode(text);
    return decoded && utf8Decode(decoded);
  };
  const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

  it('is utf8Decode(base64urlDecode(text)): same text, same refusals', () => {
    const encodedBytes = fc.uint8Array({ maxLength: 80 }).map((b) => base64urlEncode(b));
    const encodedText = fc.string({ unit: 'binary', maxLength: 60 }).map((t) => base64urlEncode(utf8Encode(t)));
    const nearMiss = fc
      .tuple(encodedText, fc.nat(), fc.constantFrom(...ALPHABET, '=', '+', '/', ' ', '.', 'é', '\u0000'))
      .map(([t, i, c]) => {
        const at = t.length === 0 ? 0 : i % (t.length + 1);
        return t.slice(0, at) + c + t.slice(at + 1);
      });
    fc.assert(
      fc.property(fc.oneof(encodedBytes, encodedText, nearMiss, fc.string({ maxLength: 40 })), (text) => {
        expect(base64urlDecodeUtf8(text)).toBe(reference(text));
      }),
      { numRuns: 3000 },
    );
  });

  it.each([
    ['', ''],
    ['Zm9v', 'foo'],
    ['Zg', 'f'],
    ['Zh', null], // non-canonical last character
    ['Zm9', null],
    ['Zm8', 'fo'],
    ['Z', null],
    ['Zg==', null],
    ['Zm9v+', null],
    ['w6k', 'é'],
    ['_w', null], // 0xFF: not UTF-8
    ['77u_', '\ufeff'], // a BOM is kept
  ])('%p → %p', (text, expected) => {
    expect(base64urlDecodeUtf8(text)).toBe(expected);
    expect(reference(text)).toBe(expected);
  });
});

describe('base64urlEncodeUtf8', () => {
  it('is base64urlEncode(utf8Encode(text)), ASCII or not', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.json()), (text) => {
        expect(base64urlEncodeUtf8(text)).toBe(base64urlEncode(utf8Encode(text)));
        expect(base64urlDecodeUtf8(base64urlEncodeUtf8(text))).toBe(utf8Decode(utf8Encode(text)));
      }),
      { numRuns: 2000 },
    );
  });
});
