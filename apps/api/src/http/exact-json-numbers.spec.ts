import { firstInexactNumber } from './exact-json-numbers';

describe('firstInexactNumber', () => {
  it.each([
    ['1e-400', '{"p":1e-400}'],
    ['1.0000000000000001', '[1.0000000000000001]'],
    ['0.0050000000000000001', '{"a":"x","p":0.0050000000000000001}'],
    ['12345678901234567890', '{"n":12345678901234567890}'],
    ['-1e400', '{"n":-1e400}'],
    ['9007199254740993', '[9007199254740993]'],
  ])('finds %s, which its double does not spell back', (literal, text) => {
    expect(firstInexactNumber(text)).toBe(literal);
  });

  it.each([
    '{"p":0.005,"q":"1e-400","r":[1,2,3]}',
    '{"p":1e-3,"q":5E-3,"r":0.50,"s":-0,"t":100,"u":1.5e+21,"v":9007199254740992}',
    '{"s":"a \\" 1e-400 \\\\","t":true,"u":null}',
    '{"0x1234567890123456789":"1.0000000000000001"}',
    '',
  ])('finds nothing in %s: numbers as written, and look-alikes inside strings', (text) => {
    expect(firstInexactNumber(text)).toBeUndefined();
  });

  it('judges a number as long as a body may be in linear time', () => {
    // A regex stripping trailing zeros retried from every zero: a 64 K-digit literal held the event
    // loop 1.9 s, one of 256 KB would have held it tens of seconds. Linear, it is milliseconds.
    const literal = `1${'0'.repeat(262_000)}1`;
    const started = process.hrtime.bigint();
    expect(firstInexactNumber(`{"n":${literal}}`)).toBe(literal);
    expect(firstInexactNumber(`{"n":${'0'.repeat(262_000)}}`)).toBeUndefined();
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(2_000);
  });
});
