import { literalRedactor, urlRedactor } from './url-redactor';

describe('urlRedactor', () => {
  it('blanks the URL in every form a library prints it, and a key long enough to be one', () => {
    const redact = urlRedactor('https://user:pa55word-long-enough@rpc.example/v2/SECRETRPCKEY0123');
    for (const text of [
      'URL: https://user:pa55word-long-enough@rpc.example/v2/SECRETRPCKEY0123',
      'URL: https://rpc.example/v2/SECRETRPCKEY0123',
      `url=${encodeURIComponent('https://rpc.example/v2/SECRETRPCKEY0123')}`,
      'path /v2/SECRETRPCKEY0123 failed',
    ])
      expect([text, redact(text)]).toEqual([text, expect.not.stringMatching(/SECRETRPCKEY|pa55word/)]);
  });

  it('blanks a key in a query written with no path before it, as viem prints the URL as written', () => {
    const redact = urlRedactor('https://rpc.example?apikey=SECRETRPCKEY0123');
    expect(redact('HTTP request failed. URL: https://rpc.example?apikey=SECRETRPCKEY0123')).toBe(
      'HTTP request failed. URL: [redacted]',
    );
  });

  it('leaves a short path alone outside the URL (it could be a common word)', () => {
    expect(urlRedactor('https://rpc.example/rpc')('the /rpc route')).toBe('the /rpc route');
  });
});

describe('literalRedactor', () => {
  it('blanks each secret as written, a longer one holding a shorter whole, and ignores empty ones', () => {
    const redact = literalRedactor(['abc', 'abcdef', ''], '<x>');
    expect(redact('1 abcdef 2 abc 3 ab')).toBe('1 <x> 2 <x> 3 ab');
    expect(literalRedactor(['st_token'])('token st_token, again st_token')).toBe('token [redacted], again [redacted]');
    expect(literalRedactor([])('nothing')).toBe('nothing');
  });
});
