import { encodeBase64Json } from '@crawlgate/core';
import {
  authorizationOfHeader,
  domainOf,
  finalStateOf,
  heldAuthorizations,
  HeldPages,
  keepRefusedPayment,
  MAX_HELD_PER_DOMAIN,
  MAX_HELD_PER_HOST,
  siteGroupsOf,
  type RefusedPayment,
} from './held-authorizations';
import { KeptByPage } from './kept-by-page';
import { TokenCache } from './token-cache';

const authorization = {
  from: '0x1111111111111111111111111111111111111111',
  to: '0x2222222222222222222222222222222222222222',
  value: '1000',
  validAfter: '0',
  validBefore: '1764201600',
  nonce: `0x${'ab'.repeat(32)}`,
};

describe('authorizationOfHeader', () => {
  it('reads the authorization of an x402 v1 or v2 exact payment header', () => {
    const expected = { from: authorization.from, nonce: authorization.nonce, validBefore: 1764201600n };
    const v1 = encodeBase64Json({ x402Version: 1, scheme: 'exact', payload: { signature: '0x', authorization } });
    const v2 = encodeBase64Json({ x402Version: 2, accepted: {}, payload: { signature: '0x', authorization } });
    expect(authorizationOfHeader(v1)).toEqual(expected);
    expect(authorizationOfHeader(v2)).toEqual(expected);
  });

  it.each([
    ['not base64 JSON', 'not a header'],
    ['no payload', encodeBase64Json({ x402Version: 1 })],
    [
      'a validBefore that is a number',
      encodeBase64Json({ payload: { authorization: { ...authorization, validBefore: 5 } } }),
    ],
    [
      'a validBefore that is not digits',
      encodeBase64Json({ payload: { authorization: { ...authorization, validBefore: '1e9' } } }),
    ],
    ['no nonce', encodeBase64Json({ payload: { authorization: { ...authorization, nonce: undefined } } })],
  ])('reads nothing from %s', (_name, header) => {
    expect(authorizationOfHeader(header)).toBeNull();
  });
});

describe('heldAuthorizations', () => {
  const reservation = { id: '1', micros: 1000n };
  const one = {
    reservation,
    chainId: 8453,
    asset: '0x3333333333333333333333333333333333333333' as const,
    from: authorization.from as `0x${string}`,
    nonce: authorization.nonce as `0x${string}`,
    validBefore: 1000n,
  };
  const budget = () => {
    const settled: [typeof reservation, boolean][] = [];
    return { settled, settle: async (r: typeof reservation, charged: boolean) => void settled.push([r, charged]) };
  };

  it('keeps one reserved, unpolled, when there is no chain client, and says it does not watch it', () => {
    const spent = budget();
    const held = heldAuthorizations(spent as never, () => undefined);
    expect(held.add(one)).toBe(false);
    expect(held.size).toBe(0);
    expect(spent.settled).toEqual([]);
  });

  it('tells one that the chain shows unused, once, after freeing it; one used is spent and told nothing', async () => {
    const spent = budget();
    const freed: string[] = [];
    let used = false;
    const client = {
      getChainId: async () => 8453,
      getBlock: async () => ({ number: 10n, timestamp: 10_000n }),
      readContract: async () => used,
    };
    const held = heldAuthorizations(spent as never, () => client as never);
    expect(held.add({ ...one, onFreed: () => void freed.push('unused') })).toBe(true);
    expect(await held.settle()).toEqual({ freed: 1, spent: 0 });
    expect(await held.settle()).toEqual({ freed: 0, spent: 0 });
    used = true;
    const other = { ...one, reservation: { id: '2', micros: 1000n }, onFreed: () => void freed.push('used') };
    held.add(other);
    expect(await held.settle()).toEqual({ freed: 0, spent: 1 });
    expect(freed).toEqual(['unused']);
    expect(spent.settled).toEqual([
      [reservation, false],
      [other.reservation, true],
    ]);
  });

  it('watches one with no reservation (counted as spent): freed, it is told once and waited for; no budget is settled', async () => {
    const spent = budget();
    const told: string[] = [];
    const client = {
      getChainId: async () => 8453,
      getBlock: async () => ({ number: 10n, timestamp: 10_000n }),
      readContract: async () => false,
    };
    const held = heldAuthorizations(spent as never, () => client as never);
    const { reservation: _none, ...unreserved } = one;
    const watched = {
      ...unreserved,
      onFreed: async () => {
        await new Promise((resolve) => setTimeout(resolve, 10));
        told.push('credited');
      },
    };
    expect(held.add(watched)).toBe(true);
    expect(await held.settle()).toEqual({ freed: 1, spent: 0 });
    expect(told).toEqual(['credited']);
    await held.resolve(watched, false);
    expect(await held.settle()).toEqual({ freed: 0, spent: 0 });
    expect(told).toEqual(['credited']);
    expect(spent.settled).toEqual([]);
  });

  it('resolves one never held (no chain client) as its gate showed it, settling its reservation', async () => {
    const spent = budget();
    const held = heldAuthorizations(spent as never, () => undefined);
    held.add(one);
    await held.resolve(one, true);
    expect(spent.settled).toEqual([[reservation, true]]);
  });

  it('resolves one it holds once: the polls no longer settle it, nor does a second resolve', async () => {
    const spent = budget();
    const client = {
      getChainId: async () => 8453,
      getBlock: async () => ({ number: 10n, timestamp: 10_000n }),
      readContract: async () => true,
    };
    const held = heldAuthorizations(spent as never, () => client as never);
    held.add(one);
    expect(held.size).toBe(1);
    await held.resolve(one, false);
    expect(held.size).toBe(0);
    expect(await held.settle()).toEqual({ freed: 0, spent: 0 });
    await held.resolve(one, true);
    expect(spent.settled).toEqual([[reservation, false]]);
  });

  it('keeps one of another chain than the client’s reserved, and stops polling for it', async () => {
    const spent = budget();
    const calls: string[] = [];
    const client = {
      getChainId: async () => (calls.push('chainId'), 84532),
      getBlock: async () => (calls.push('block'), { number: 10n, timestamp: 10_000n }),
      readContract: async () => (calls.push('read'), false),
    };
    const held = heldAuthorizations(spent as never, () => client as never);
    held.add(one);
    expect(await held.settle()).toEqual({ freed: 0, spent: 0 });
    expect(held.size).toBe(0);
    expect(spent.settled).toEqual([]);
    expect(calls).not.toContain('read');
    // Its gate's API answers a token for it: spent, though the polls let it go.
    await held.resolve(one, true);
    expect(spent.settled).toEqual([[reservation, true]]);
  });
});

describe('finalStateOf', () => {
  const one = {
    chainId: 8453,
    asset: '0x3333333333333333333333333333333333333333' as const,
    from: authorization.from as `0x${string}`,
    nonce: authorization.nonce as `0x${string}`,
    validBefore: 1000n,
  };
  const chain = (chainId: number, timestamp: bigint, used = true) =>
    ({
      getChainId: async () => chainId,
      getBlock: async () => ({ number: 10n, timestamp }),
      readContract: async () => used,
    }) as never;

  it('reads used or unused once the newest block is a minute past validBefore', async () => {
    expect(await finalStateOf(chain(8453, 1060n, true), one)).toBe('used');
    expect(await finalStateOf(chain(8453, 1060n, false), one)).toBe('unused');
  });

  it('is pending before then on a chain that moves, stale on one whose newest block is over two minutes old', async () => {
    expect(await finalStateOf(chain(8453, 1059n), one, 1059_000 + 120_000)).toBe('pending');
    expect(await finalStateOf(chain(8453, 1059n), one, 1059_000 + 120_001)).toBe('stale');
  });

  it("says other-chain for an authorization of another chain than the client's", async () => {
    expect(await finalStateOf(chain(84532, 5000n), one)).toBe('other-chain');
  });
});

describe('HeldPages', () => {
  const key = (url: string) => TokenCache.key(new URL(url));
  const now = 1_000_000;

  it(`holds a host once ${MAX_HELD_PER_HOST} of its pages are held, until the earliest of those ends`, () => {
    const pages = new HeldPages();
    pages.keep(key('https://refusing.example/a'), now + 3_000);
    pages.keep(key('https://refusing.example/b'), now + 1_000);
    expect(pages.hostUntil('refusing.example', now)).toBeUndefined();
    pages.keep(key('https://refusing.example/c'), now + 2_000);
    expect(pages.hostUntil('refusing.example', now)).toBe(now + 1_000);
    expect(pages.until(key('https://refusing.example/b'), now)).toBe(now + 1_000);
    expect(pages.hostUntil('refusing.example', now + 1_000)).toBeUndefined();
  });

  it(`holds every host of a domain once ${MAX_HELD_PER_DOMAIN} of its pages are held, on any of its host names, until the earliest of those ends`, () => {
    const pages = new HeldPages();
    for (let n = 1; n < MAX_HELD_PER_DOMAIN; n++) pages.keep(key(`https://p${n}.refusing.example/a`), now + 1_000 * n);
    expect(pages.hostUntil('p99.refusing.example', now)).toBeUndefined();
    pages.keep(key('https://refusing.example/a'), now + 9_000);
    for (const host of ['p99.refusing.example', 'refusing.example', 'a.b.refusing.example'])
      expect(pages.hostUntil(host, now)).toBe(now + 1_000);
    expect(pages.hostUntil('p99.refusing.example', now + 1_000)).toBeUndefined();
    // Another domain, and a host name under another's last labels, are not held.
    expect(pages.hostUntil('refusing.example.org', now)).toBeUndefined();
    expect(pages.hostUntil('honest.example', now)).toBeUndefined();
  });

  it('holds the URLs asked for that redirected to a refused page, counted against no host (helper-353)', () => {
    const pages = new HeldPages();
    for (const n of [1, 2, 3]) {
      pages.keep(key(`https://refusing.example/x${n}`), now + 1_000);
      pages.keep(key(`https://honest.example/go/${n}`), now + 1_000, { alias: true });
    }
    expect(pages.until(key('https://honest.example/go/1'), now)).toBe(now + 1_000);
    expect(pages.hostUntil('honest.example', now)).toBeUndefined();
    expect(pages.hostUntil('refusing.example', now)).toBe(now + 1_000);
  });

  it('never lets an alias weaken a page still held under the same key: it stays counted, to its later end (helper-356)', () => {
    const pages = new HeldPages();
    for (const n of [1, 2, 3]) {
      pages.keep(key(`https://refusing.example/a${n}`), now + 2_000, {}, now);
      pages.keep(key(`https://refusing.example/a${n}?hop`), now + 1_000, { alias: true }, now);
    }
    expect(pages.until(key('https://refusing.example/a1'), now)).toBe(now + 2_000);
    expect(pages.hostUntil('refusing.example', now)).toBe(now + 2_000);
    // An alias of a key no longer held is only an alias.
    pages.keep(key('https://refusing.example/a1'), now + 5_000, { alias: true }, now + 3_000);
    expect(pages.hostUntil('refusing.example', now + 3_000)).toBeUndefined();
  });
});

describe('siteGroupsOf', () => {
  it('groups a page by its domain, one label more, then its host; addresses by their network, then themselves', () => {
    const groups = (url: string) => siteGroupsOf(TokenCache.key(new URL(url)));
    expect(groups('https://p1.Evil.co.uk./a')).toEqual(['co.uk', 'evil.co.uk', 'p1.evil.co.uk']);
    expect(groups('https://victim.co.uk/a')).toEqual(['co.uk', 'victim.co.uk', 'victim.co.uk']);
    expect(groups('http://203.0.113.7:8080/a')).toEqual(['203.0.113.0/24', '203.0.113.7']);
    expect(groups('http://[2001:db8:7::9]/a')).toEqual(['[2001:db8:7::]/48', '[2001:db8:7::9]']);
  });
});

describe('domainOf', () => {
  it("is a host name's last two labels, in lower case; an IP address or a name of fewer labels is itself", () => {
    expect(domainOf('P1.Refusing.Example')).toBe('refusing.example');
    expect(domainOf('a.b.refusing.example.')).toBe('refusing.example');
    expect(domainOf('news.bbc.co.uk')).toBe('co.uk'); // no public suffix list: shared, never split
    expect(domainOf('localhost')).toBe('localhost');
    expect(domainOf('127.0.0.2')).toBe('127.0.0.2');
    expect(domainOf('refusing.example...')).toBe('refusing.example');
  });

  it("is an IPv6 address's /48, however the address is written (helper-358, helper-359)", () => {
    const prefix = '[2001:db8:7::]/48';
    for (const host of ['[2001:db8:7::1]', '[2001:db8:7:ffff::2]', '[2001:0db8:0007:1:2:3:4:5]'])
      expect(domainOf(host)).toBe(prefix);
    expect(domainOf(new URL('http://[2001:db8:7:0:0:0:0:9]:8080/').hostname)).toBe(prefix);
    expect(domainOf('[2001:db8:8::1]')).not.toBe(prefix);
    expect(domainOf('[::1]')).toBe('[0:0:0::]/48');
  });
});

describe('keepRefusedPayment', () => {
  const key = (url: string) => TokenCache.key(new URL(url));
  /** A refused payment of `page`, reached by asking for `asked` (only what the store reads of it). */
  const refused = (page: string, asked: string) =>
    ({ url: page, keys: [key(page), key(asked)] }) as unknown as RefusedPayment;
  const store = () => new KeptByPage<RefusedPayment>(() => Number.POSITIVE_INFINITY, 100);

  it("never lets another payment's URL asked for replace a live payment of the page it is the key of (helper-357)", () => {
    const kept = store();
    const a1 = refused('https://site.example/a_1', 'https://site.example/a_0?hop');
    const a2 = refused('https://site.example/a_2', 'https://site.example/a_1?hop'); // its URL asked for has a_1's key
    keepRefusedPayment(kept, a1);
    keepRefusedPayment(kept, a2);
    expect(kept.get(key('https://site.example/a_1'))).toBe(a1);
    expect(kept.get(key('https://site.example/a_2'))).toBe(a2);
  });

  it("keeps a page's own payment over the URL asked for of another kept before it, and an alias where no page's is", () => {
    const kept = store();
    const a2 = refused('https://site.example/a_2', 'https://site.example/a_1?hop');
    const a1 = refused('https://site.example/a_1', 'https://site.example/a_0?hop');
    keepRefusedPayment(kept, a2);
    expect(kept.get(key('https://site.example/a_1'))).toBe(a2); // asked for there, no payment of a_1 yet
    keepRefusedPayment(kept, a1);
    expect(kept.get(key('https://site.example/a_1'))).toBe(a1);
    expect(kept.get(key('https://site.example/a_0'))).toBe(a1);
  });
});
