import { parseRetryAfter } from './retry-after';

describe('parseRetryAfter', () => {
  const now = Date.parse('Thu, 01 Jan 2026 00:00:00 GMT');

  it('reads delay-seconds, 0 included, and an HTTP-date as the seconds until it (a past one is now)', () => {
    expect(parseRetryAfter('7', now)).toBe(7);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30);
    expect(parseRetryAfter('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('Thursday, 01-Jan-26 00:01:00 GMT', now)).toBe(60);
  });

  it('is undefined when absent or no delay-seconds nor date (a sign, a fraction, a word)', () => {
    for (const header of [null, undefined, '', '  ', '-5', '1.5', '2026-01-01', 'soon', '0x10', 'Thu, soon'])
      expect(parseRetryAfter(header, now)).toBeUndefined();
  });
});
