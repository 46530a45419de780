import { signAccessToken } from '@crawlgate/core';
import { crawlerPrice, headerValue, presentedToken } from './request-headers';

describe('request headers', () => {
  it('reads the first value of a header whatever the case of its name', () => {
    expect(headerValue({ 'x-a': ['1', '2'] }, 'X-A')).toBe('1');
    expect(headerValue({ 'X-Crawlgate-Token': 't' }, 'x-crawlgate-token')).toBe('t');
    expect(headerValue({ 'x-a': '' }, 'x-a')).toBeUndefined();
  });

  it('takes a bearer value as a token only when it is shaped like a Crawlgate token', () => {
    const token = signAccessToken({ gate_id: 'g', site_id: 's', url: '/', kid: 'k', iat: 1, exp: 2 }, 'secret');
    expect(presentedToken({ authorization: `Bearer ${token}` })).toBe(token);
    expect(presentedToken({ authorization: 'Bearer some-session-jwt' })).toBeUndefined();
    expect(presentedToken({ authorization: `Basic ${token}` })).toBeUndefined();
    expect(presentedToken({ 'x-crawlgate-token': ' anything ' })).toBe('anything');
  });

  it.each([
    ['USD 0.01', 10_000n],
    ['usd 0.5', 500_000n],
    ['0.002', 2_000n],
    ['USD 3', 1_000_000n],
    ['EUR 0.01', undefined],
    ['USD 0.0000001', undefined],
    ['USD -1', undefined],
  ])('reads crawler-max-price %j', (value, micros) => {
    expect(crawlerPrice({ 'crawler-max-price': value }, 'crawler-max-price')).toBe(micros);
  });

  it('reads a missing price header as null, and an exact price above 1 USD as matching none', () => {
    expect(crawlerPrice({}, 'crawler-max-price')).toBeNull();
    expect(crawlerPrice({ 'crawler-exact-price': 'USD 2' }, 'crawler-exact-price')).toBe(-1n);
  });
});
