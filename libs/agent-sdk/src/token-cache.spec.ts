import {
  base64urlEncode,
  base64urlEncodeUtf8,
  MAX_ACCESS_TOKEN_LENGTH,
  MAX_ACCESS_TOKEN_TTL_SECONDS,
  MAX_UNIX_SECONDS,
  signAccessToken,
} from '@crawlgate/core';
import type { Offer } from './offers';
import { MAX_CACHED_TOKENS, TokenCache, tokenBoughtAt } from './token-cache';

const NOW = 1_800_000_000;

/** A token for `/page-i` expiring at `exp`, as a site would issue it. */
function token(i: number, exp: number): string {
  return signAccessToken({ gate_id: `g${i}`, site_id: 's', url: `/page-${i}`, kid: 'k', iat: NOW, exp }, 'secret');
}

const key = (i: number) => TokenCache.key(new URL(`https://site.example/page-${i}`));

describe('TokenCache', () => {
  it('offers a token until shortly before it expires', () => {
    const cache = new TokenCache();
    cache.set(key(1), token(1, NOW + 60), NOW);
    expect(cache.get(key(1), NOW + 50)).toBe(token(1, NOW + 60));
    expect(cache.get(key(1), NOW + 56)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('keeps no more than its bound of many distinct pages, dropping the oldest', () => {
    const cache = new TokenCache();
    const pages = MAX_CACHED_TOKENS + 500;
    for (let i = 0; i < pages; i++) cache.set(key(i), token(i, NOW + 1800), NOW);
    expect(cache.size).toBe(MAX_CACHED_TOKENS);
    expect(cache.get(key(0), NOW)).toBeUndefined();
    expect(cache.get(key(499), NOW)).toBeUndefined();
    expect(cache.get(key(500), NOW)).toBe(token(500, NOW + 1800));
    expect(cache.get(key(pages - 1), NOW)).toBe(token(pages - 1, NOW + 1800));
  });

  it('keeps the tokens in use: a page read again is the newest, not the first dropped', () => {
    // A site selling pages for almost nothing must not push out the tokens an agent keeps using.
    const cache = new TokenCache(3);
    for (const i of [1, 2, 3]) cache.set(key(i), token(i, NOW + 1800), NOW);
    expect(cache.get(key(1), NOW)).toBe(token(1, NOW + 1800));
    cache.set(key(4), token(4, NOW + 1800), NOW);
    expect(cache.get(key(1), NOW)).toBe(token(1, NOW + 1800));
    expect(cache.get(key(2), NOW)).toBeUndefined();
  });

  it('a full cache of one-token sites drops the least recently used: a site’s tokens in use stay', () => {
    // One origin per page (a wildcard domain), each holding one token: the tokens read again last stay.
    const cache = new TokenCache(100);
    const at = (origin: string, i: number) => TokenCache.key(new URL(`${origin}/page-${i}`));
    for (let i = 0; i < 90; i++) cache.set(at(`https://p${i}.evil.example`, i), token(i, NOW + 1800), NOW);
    for (let i = 0; i < 10; i++) cache.set(at('https://good.example', i), token(i, NOW + 1800), NOW);
    for (let i = 0; i < 10; i++) cache.get(at('https://good.example', i), NOW); // in use
    for (let i = 90; i < 150; i++) cache.set(at(`https://p${i}.evil.example`, i), token(i, NOW + 1800), NOW);
    for (let i = 0; i < 10; i++) expect(cache.get(at('https://good.example', i), NOW)).toBe(token(i, NOW + 1800));
  });

  it('keys a host with a trailing dot as the host: the same site, the same token', () => {
    // Kept apart, a redirect to https://site.example./p made the agent pay again for a page it held a token for.
    expect(TokenCache.key(new URL('https://site.example./p'))).toBe(TokenCache.key(new URL('https://site.example/p')));
    expect(TokenCache.key(new URL('http://site.example.:8080/p'))).toBe('http://site.example:8080/p');
    expect(TokenCache.hostOf(TokenCache.key(new URL('http://Site.example:8080/p')))).toBe('site.example');
    expect(TokenCache.hostOf(TokenCache.key(new URL('http://[::1]:8080/p')))).toBe('[::1]');
    // An IPv4-mapped IPv6 address is its IPv4 host.
    expect(TokenCache.key(new URL('https://[::ffff:127.0.0.2]/p'))).toBe(
      TokenCache.key(new URL('https://127.0.0.2/p')),
    );
  });

  it('a full cache drops its expired tokens first, then the oldest', () => {
    const cache = new TokenCache(4);
    cache.set(key(1), token(1, NOW + 3600), NOW); // the oldest, still live
    cache.set(key(2), token(2, NOW + 60), NOW);
    cache.set(key(3), token(3, NOW + 60), NOW);
    cache.set(key(4), token(4, NOW + 3600), NOW);
    const later = NOW + 120; // 2 and 3 have expired
    cache.set(key(5), token(5, later + 3600), later);
    expect(cache.size).toBe(3);
    expect([1, 4, 5].map((i) => cache.get(key(i), later) !== undefined)).toEqual([true, true, true]);
    // Nothing expired now: the oldest goes.
    cache.set(key(6), token(6, later + 3600), later);
    cache.set(key(7), token(7, later + 3600), later);
    expect(cache.size).toBe(4);
    expect(cache.get(key(1), later)).toBeUndefined();
    expect([4, 5, 6, 7].map((i) => cache.get(key(i), later) !== undefined)).toEqual([true, true, true, true]);
  });

  it('a token kept again for its page counts as the newest', () => {
    const cache = new TokenCache(2);
    cache.set(key(1), token(1, NOW + 3600), NOW);
    cache.set(key(2), token(2, NOW + 3600), NOW);
    cache.set(key(1), token(1, NOW + 3600), NOW);
    cache.set(key(3), token(3, NOW + 3600), NOW);
    expect(cache.get(key(1), NOW)).toBeDefined();
    expect(cache.get(key(2), NOW)).toBeUndefined();
  });

  it('keeps a token naming a far-future expiry no longer than the longest lifetime the API issues', () => {
    const cache = new TokenCache();
    const forever = token(1, MAX_UNIX_SECONDS); // year 9999
    cache.set(key(1), forever, NOW);
    expect(cache.get(key(1), NOW + MAX_ACCESS_TOKEN_TTL_SECONDS - 10)).toBe(forever);
    expect(cache.get(key(1), NOW + MAX_ACCESS_TOKEN_TTL_SECONDS)).toBeUndefined();
    // Clamped, it is swept with the expired ones once the cache is full.
    const small = new TokenCache(1);
    small.set(key(1), forever, NOW);
    const later = NOW + MAX_ACCESS_TOKEN_TTL_SECONDS;
    small.set(key(2), token(2, later + 60), later);
    expect(small.size).toBe(1);
    expect(small.get(key(2), later)).toBeDefined();
  });

  it('keeps no token it cannot read, none already expired, and none longer than core’s token size limit', () => {
    const cache = new TokenCache();
    cache.set(key(1), 'not a token', NOW);
    cache.set(key(2), token(2, NOW - 1), NOW);
    // Well-formed but for its length: a payload padded past MAX_ACCESS_TOKEN_LENGTH.
    const payload = {
      gate_id: 'g',
      site_id: 's',
      url: `/${'a'.repeat(MAX_ACCESS_TOKEN_LENGTH)}`,
      kid: 'k',
      iat: NOW,
      exp: NOW + 60,
    };
    const oversized = `${base64urlEncodeUtf8(JSON.stringify(payload))}.${base64urlEncode(new Uint8Array(32))}`;
    expect(oversized.length).toBeGreaterThan(MAX_ACCESS_TOKEN_LENGTH);
    cache.set(key(3), oversized, NOW);
    expect(cache.size).toBe(0);
  });
});

describe('tokenBoughtAt', () => {
  const REF = '6f9619ff-8b86-4d01-b42d-00cf4fc964ff';
  const ADDRESS = `0x${'1'.repeat(40)}` as const;
  /** An exact offer; `gateRef`: the Crawlgate gate its verify_url names. */
  const offerOf = (gateRef?: string): Offer => ({
    scheme: 'exact',
    version: 1,
    network: 'local',
    chainId: 31337,
    amount: 1000n,
    asset: ADDRESS,
    payTo: ADDRESS,
    maxTimeoutSeconds: 60,
    domain: { name: 'USDC', version: '2' },
    ...(gateRef && { gateRef }),
  });
  const tokenOfGate = (ref: string, url = '/page-1') =>
    signAccessToken({ gate_id: ref, site_id: 's', url, kid: 'k', iat: NOW, exp: NOW + 60 }, 'secret');

  it('holds for a token of the gate the payment went to, however a proxy before the gate spelled the path', () => {
    const paidAt = { url: 'https://site.example/page-1', offer: offerOf(REF) };
    expect(tokenBoughtAt(tokenOfGate(REF), paidAt)).toBe(true);
    expect(tokenBoughtAt(tokenOfGate(REF), { ...paidAt, url: 'https://site.example/blog/page-1' })).toBe(true);
  });

  it('holds, where no gate was named, for a token bound to the page’s path as the gate reads it, whatever its origin or query', () => {
    expect(tokenBoughtAt(token(1, NOW + 60), { url: 'https://site.example/page-1', offer: offerOf() })).toBe(true);
    const elsewhere = { url: new URL('https://other.example/a/../page-1?x=1'), offer: offerOf() };
    expect(tokenBoughtAt(token(1, NOW + 60), elsewhere)).toBe(true);
  });

  it('fails for another gate’s or page’s token, a token it cannot read, or none', () => {
    const paidAt = { url: 'https://site.example/page-1', offer: offerOf(REF) };
    // Another gate's token naming this very page: not what this payment bought.
    expect(tokenBoughtAt(tokenOfGate('7f9619ff-8b86-4d01-b42d-00cf4fc964ff'), paidAt)).toBe(false);
    expect(tokenBoughtAt(token(2, NOW + 60), { url: 'https://site.example/page-1', offer: offerOf() })).toBe(false);
    expect(tokenBoughtAt(token(1, NOW + 60), { url: 'https://site.example/page-1/', offer: offerOf() })).toBe(false);
    expect(tokenBoughtAt('not a token', paidAt)).toBe(false);
    expect(tokenBoughtAt(undefined, { url: 'https://site.example/page-1', offer: offerOf() })).toBe(false);
  });
});
