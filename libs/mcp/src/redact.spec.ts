import { redactJson, secretRedactor } from './redact';

const KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';

describe('secretRedactor', () => {
  const redact = secretRedactor(KEY);

  it('blanks the key with or without 0x, in any case', () => {
    expect(redact(`a ${KEY} b ${KEY.slice(2).toUpperCase()} c 0X${KEY.slice(2)}`)).toBe(
      'a [redacted] b [redacted] c [redacted]',
    );
  });

  it('leaves other text alone, addresses and hashes included', () => {
    const text = 'paid 0.01 USD from 0x70997970C51812dc3A010C7d01b50e0d17dc79C8, tx 0x' + 'ab'.repeat(32);
    expect(redact(text)).toBe(text);
  });

  it('refuses a secret that is not hex (it could not be a key, and would be a pattern)', () => {
    expect(() => secretRedactor('.*')).toThrow(TypeError);
  });
});

describe('redactJson', () => {
  const redact = secretRedactor(KEY);

  it('blanks the key in every string of a value, and returns the same object when there is none', () => {
    const clean = { content: [{ type: 'text', text: 'nothing here' }] };
    expect(redactJson(clean, redact)).toBe(clean);
    expect(
      redactJson({ content: [{ type: 'text', text: `oops ${KEY}` }], nested: { list: [KEY.slice(2)] } }, redact),
    ).toEqual({
      content: [{ type: 'text', text: 'oops [redacted]' }],
      nested: { list: ['[redacted]'] },
    });
  });
});
