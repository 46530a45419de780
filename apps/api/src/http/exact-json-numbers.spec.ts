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
});
