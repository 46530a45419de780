import fc from 'fast-check';
import {
  formatMicrosUsd,
  MAX_PRICE_MICROS,
  MAX_PRICE_STRING_LENGTH,
  MICROS_PER_USD,
  parsePriceUsd,
  parseUsdAmount,
  PRICE_DECIMALS,
  PRICE_STRING_PATTERN,
  type PriceParse,
} from './price';

const micros = (input: unknown) => {
  const parsed = parsePriceUsd(input);
  if (!parsed.ok) throw new Error(`expected ${JSON.stringify(input)} to parse, got ${parsed.type}`);
  return parsed.micros;
};
const errorType = (input: unknown) => {
  const parsed: PriceParse = parsePriceUsd(input);
  return parsed.ok ? 'ok' : parsed.type;
};

describe('constants', () => {
  it('counts one USDC atomic unit per micro-USD, 1 USD at most', () => {
    expect(MICROS_PER_USD).toBe(1_000_000n);
    expect(MAX_PRICE_MICROS).toBe(1_000_000n);
    expect(PRICE_DECIMALS).toBe(6);
  });
});

describe('parsePriceUsd: must-pass cases', () => {
  it.each<[unknown, bigint]>([
    [0, 0n],
    [1, 1_000_000n],
    ['0', 0n],
    ['0.000001', 1n],
    ['00.5', 500_000n],
    ['+0.5', 500_000n],
    [0.005, 5_000n],
    ['0.0050', 5_000n],
    ['1.', 1_000_000n],
    ['.5', 500_000n],
  ])('accepts %j as %p micros', (input, expected) => {
    expect(micros(input)).toBe(expected);
  });

  it.each<[unknown, string]>([
    ['1.0000001', 'price_precision'],
    ['-0.1', 'price_range'],
    ['.', 'price_format'],
    ['+-', 'price_format'],
    [1.5, 'price_range'],
    ['abc', 'price_format'],
    [null, 'price_type'],
  ])('rejects %j with %s', (input, type) => {
    expect(errorType(input)).toBe(type);
  });
});

describe('PRICE_STRING_PATTERN', () => {
  const pattern = new RegExp(PRICE_STRING_PATTERN);
  it('refuses what has no digit, as the parser does', () => {
    for (const text of ['', '+', '-', '.', '+.', '-.', '..', '1..2', '1.2.3', ' 1', '1e-3', 'abc']) {
      expect([text, pattern.test(text)]).toEqual([text, false]);
      expect([text, errorType(text)]).toEqual([text, 'price_format']);
    }
  });
  it('accepts every string the parser reads as well formed', () => {
    for (const text of ['0', '1', '+0.5', '-0', '.5', '5.', '007', '0.000001', '1.0000001', '2'])
      expect([text, pattern.test(text)]).toEqual([text, true]);
    fc.assert(
      fc.property(
        fc.string({ maxLength: 12, unit: fc.constantFrom('+', '-', '.', '0', '1', '9', 'e', ' ') }),
        (text) => {
          expect(pattern.test(text)).toBe(errorType(text) !== 'price_format');
        },
      ),
    );
  });
});

describe('parsePriceUsd: numbers', () => {
  it.each<[number, bigint]>([
    [1e-6, 1n],
    [0.000001, 1n],
    [5e-6, 5n],
    [0.1, 100_000n],
    [0.3, 300_000n],
    [0.123456, 123_456n],
    [0.999999, 999_999n],
    [-0, 0n],
    [1.0, 1_000_000n],
    [0.01, 10_000n],
  ])('reads %p exactly as %p micros, without float arithmetic', (input, expected) => {
    expect(micros(input)).toBe(expected);
  });

  it('reads exponent forms exactly: 5e-7 has 7 decimals', () => {
    expect(errorType(5e-7)).toBe('price_precision');
    expect(errorType(1e-7)).toBe('price_precision');
    expect(errorType(1.5e-7)).toBe('price_precision');
    expect(errorType(1e-300)).toBe('price_precision');
    expect(errorType(Number.MIN_VALUE)).toBe('price_precision');
  });

  it('rejects numbers above 1 or below 0 as out of range', () => {
    expect(errorType(1.000001)).toBe('price_range');
    expect(errorType(2)).toBe('price_range');
    expect(errorType(1e21)).toBe('price_range');
    expect(errorType(1.5e300)).toBe('price_range');
    expect(errorType(Number.MAX_VALUE)).toBe('price_range');
    expect(errorType(-0.5)).toBe('price_range');
    expect(errorType(-1e-6)).toBe('price_range');
  });

  it('checks precision before range', () => {
    expect(errorType(1.0000001)).toBe('price_precision');
    expect(errorType(-0.0000001)).toBe('price_precision');
  });

  it('rejects NaN and infinities as a type error', () => {
    for (const input of [NaN, Infinity, -Infinity]) expect(errorType(input)).toBe('price_type');
  });

  it('reads every number with at most 6 decimals in 0..1 as the exact micro amount', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000 }), (n) => {
        expect(micros(n / 1_000_000)).toBe(BigInt(n));
      }),
    );
  });
});

describe('parsePriceUsd: strings', () => {
  it.each<[string, bigint]>([
    ['1', 1_000_000n],
    ['1.000000', 1_000_000n],
    ['1.0000000000', 1_000_000n],
    ['0.5000000', 500_000n],
    ['-0', 0n],
    ['-0.000', 0n],
    ['+0', 0n],
    ['-.0', 0n],
    ['000000', 0n],
    ['0.', 0n],
    ['.000001', 1n],
    ['+1', 1_000_000n],
    ['0001.000', 1_000_000n],
    ['0.123456', 123_456n],
  ])('accepts %j as %p micros', (input, expected) => {
    expect(micros(input)).toBe(expected);
  });

  it.each([
    '',
    '.',
    '+',
    '-',
    '+-',
    '-+',
    '-.',
    '+.',
    '..',
    '1..0',
    '0.1.2',
    '++1',
    '--1',
    '1-',
    '1e-6',
    '1E3',
    '0x1',
    'Infinity',
    'NaN',
    '½',
    '١',
    '0,5',
    '1_000',
    ' 0.5',
    '0.5 ',
    '0. 5',
    '\t1',
    '0.5\n',
  ])('rejects %j as a format error', (input) => {
    expect(errorType(input)).toBe('price_format');
  });

  it.each(['1.0000001', '0.0000001', '0.1234567', '-0.0000001', '2.1234567'])(
    'rejects %j: more than 6 decimals',
    (input) => {
      expect(errorType(input)).toBe('price_precision');
    },
  );

  it.each(['1.000001', '2', '10', '-0.1', '-1', '-0.000001', '0001.1'])('rejects %j as out of range', (input) => {
    expect(errorType(input)).toBe('price_range');
  });

  it('treats an over-long string as a format error', () => {
    expect(parsePriceUsd('0'.repeat(10_000) + '.5')).toEqual({
      ok: false,
      type: 'price_format',
      msg: `Price must be at most ${MAX_PRICE_STRING_LENGTH} characters`,
      ctx: { max_length: MAX_PRICE_STRING_LENGTH },
    });
    expect(errorType('9'.repeat(1_000_000))).toBe('price_format');
    expect(errorType('1'.repeat(50_000) + 'x')).toBe('price_format');
  });

  it('accepts strings up to the length cap', () => {
    expect(micros('0'.repeat(MAX_PRICE_STRING_LENGTH - 2) + '.5')).toBe(500_000n);
    expect(micros('0.5' + '0'.repeat(MAX_PRICE_STRING_LENGTH - 3))).toBe(500_000n);
    expect(errorType('0.5' + '0'.repeat(MAX_PRICE_STRING_LENGTH - 2))).toBe('price_format');
  });

  it('agrees with the number form', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000 }), (n) => {
        expect(micros(String(n / 1_000_000))).toBe(micros(n / 1_000_000));
      }),
    );
  });
});

describe('parsePriceUsd: other types', () => {
  it.each<[string, unknown]>([
    ['true', true],
    ['false', false],
    ['null', null],
    ['undefined', undefined],
    ['an object', { usd: 1 }],
    ['an array', [0.5]],
    ['a bigint', 1n],
    ['a symbol', Symbol('x')],
    ['a boxed number', new Number(0.5)],
  ])('rejects %s as a type error', (_, input) => {
    expect(errorType(input)).toBe('price_type');
  });
});

describe('parsePriceUsd: messages', () => {
  it('says what is wrong in a sentence, with context where a bound applies', () => {
    expect(parsePriceUsd(1.5)).toEqual({
      ok: false,
      type: 'price_range',
      msg: 'Price must be between 0 and 1 USD',
      ctx: { min: '0', max: '1' },
    });
    expect(parsePriceUsd('0.0000001')).toEqual({
      ok: false,
      type: 'price_precision',
      msg: 'Price must have at most 6 decimal places',
      ctx: { max_decimals: 6 },
    });
    expect(parsePriceUsd('abc')).toEqual({
      ok: false,
      type: 'price_format',
      msg: 'Price must be a decimal number such as "0.005"',
    });
    expect(parsePriceUsd(true)).toEqual({
      ok: false,
      type: 'price_type',
      msg: 'Price must be a number or a decimal string',
    });
    expect(parsePriceUsd(NaN)).toEqual({ ok: false, type: 'price_type', msg: 'Price must be a finite number' });
  });
});

describe('formatMicrosUsd', () => {
  it.each<[bigint, string]>([
    [0n, '0'],
    [1n, '0.000001'],
    [10n, '0.00001'],
    [5_000n, '0.005'],
    [500_000n, '0.5'],
    [1_000_000n, '1'],
    [1_234_567n, '1.234567'],
    [12_000_000n, '12'],
    [123_456_789_000_000_000_001n, '123456789000000.000001'],
  ])('renders %p as %j', (input, expected) => {
    expect(formatMicrosUsd(input)).toBe(expected);
  });

  it('throws RangeError on a negative amount', () => {
    expect(() => formatMicrosUsd(-1n)).toThrow(RangeError);
  });

  it('round-trips through parsePriceUsd', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: MAX_PRICE_MICROS }), (n) => {
        expect(micros(formatMicrosUsd(n))).toBe(n);
      }),
    );
  });
});

describe('parseUsdAmount', () => {
  it('reads amounts above 1 USD up to the given bound, by the same rules as prices', () => {
    expect(parseUsdAmount('250.5', 1_000_000_000n)).toEqual({ ok: true, micros: 250_500_000n });
    expect(parseUsdAmount(1000, 1_000_000_000n)).toEqual({ ok: true, micros: 1_000_000_000n });
    expect(parseUsdAmount('1000.000001', 1_000_000_000n)).toMatchObject({
      ok: false,
      type: 'price_range',
      msg: 'Amount must be between 0 and 1000 USD',
      ctx: { max: '1000' },
    });
    expect(parseUsdAmount('1.1234567', 1_000_000_000n)).toMatchObject({ ok: false, type: 'price_precision' });
    expect(parseUsdAmount('-1', 1_000_000_000n)).toMatchObject({ ok: false, type: 'price_range' });
  });
});
