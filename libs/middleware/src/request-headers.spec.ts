import { signAccessToken } from '@crawlgate/core';
import {
  crawlerPrice,
  headersOfFetch,
  headerValue,
  lowerCaseHeaders,
  presentedToken,
  type HeaderRecord,
} from './request-headers';

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
    expect(presentedToken({ authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln' })).toBeUndefined();
    // Shaped like one but not signed: presented (so the visitor is an agent), and refused by the check.
    const [, mac] = token.split('.');
    const unsigned = `eyJub3QiOiJhIHRva2VuIn0.${mac}`;
    expect(presentedToken({ authorization: `Bearer ${unsigned}` })).toBe(unsigned);
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

  it('reads a record made lower-case once exactly as it reads the record itself, whatever its spellings', () => {
    const records: HeaderRecord[] = [
      { 'user-agent': 'a', 'x-payment': ['p1', 'p2'] },
      { 'User-Agent': 'a', 'user-agent': 'b' },
      { 'user-agent': 'b', 'User-Agent': 'a' },
      { 'User-Agent': 'a', 'USER-AGENT': 'c' },
      { 'user-agent': undefined, 'User-Agent': 'a' },
      { 'User-Agent': 'a', 'user-agent': undefined },
      { 'X-Crawlgate-Token': 't', authorization: '' },
      {},
    ];
    const names = [
      'user-agent',
      'x-payment',
      'x-crawlgate-token',
      'authorization',
      'payment-signature',
      'crawler-max-price',
    ];
    for (const record of records) {
      const once = lowerCaseHeaders(record);
      expect(lowerCaseHeaders(once)).toBe(once);
      for (const name of names)
        expect([record, name, headerValue(once, name)]).toEqual([record, name, headerValue(record, name)]);
    }
  });

  it('reads a fetch Headers as the record Object.fromEntries made of it', () => {
    const headers = new Headers([
      ['User-Agent', 'GPTBot/1.0'],
      ['X-Payment', 'a'],
      ['x-payment', 'b'],
      ['Accept', 'text/html'],
    ]);
    const record = headersOfFetch(headers);
    expect(Object.entries(record)).toEqual(Object.entries(Object.fromEntries(headers)));
    for (const name of ['user-agent', 'x-payment', 'accept', 'authorization'])
      expect(headerValue(record, name)).toBe(headerValue(Object.fromEntries(headers), name));
  });
});
