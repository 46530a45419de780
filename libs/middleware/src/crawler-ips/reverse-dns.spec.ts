/*
 * Forward-confirmed reverse DNS against a real DNS server on loopback, through Node's own resolver:
 * what a crawler that does not want to pay can write (its own address's PTR record) never
 * verifies it; only a name under the operator's domain that resolves back to the address does.
 */

import {
  reverseName as testReverseName,
  startDnsServer,
  type DnsRecords,
  type DnsServer,
} from '../../testing/dns-server';
import { parseIp } from './ip-prefix';
import { createReverseDns, reverseName, type ReverseDnsOptions } from './reverse-dns';

const DOMAINS = new Map<string, readonly string[]>([
  ['YandexBot', ['yandex.ru', 'yandex.net', 'yandex.com']],
  ['msnbot', ['search.msn.com']],
]);
const YANDEX_IP = '5.255.253.1';
const YANDEX_HOST = 'spider-5-255-253-1.yandex.com';
const YANDEX_IP6 = '2a02:6b8:c0e:500:1:0:0:1';
const YANDEX_HOST6 = 'spider-v6.yandex.net';
const MSN_IP = '157.55.39.1';
const MSN_HOST = 'msnbot-157-55-39-1.search.msn.com';
const SCRAPER_IP = '45.13.22.7'; // a public address a scraper holds, and writes its PTR record

let dns: DnsServer;
let records: DnsRecords;

beforeAll(async () => {
  records = { ptr: {}, a: {}, aaaa: {} };
  dns = await startDnsServer(records);
});
afterAll(() => dns.close());
beforeEach(() => {
  records.ptr = {
    [testReverseName(YANDEX_IP)]: [YANDEX_HOST],
    [testReverseName(YANDEX_IP6)]: [YANDEX_HOST6],
    [testReverseName(MSN_IP)]: [MSN_HOST],
  };
  records.a = { [YANDEX_HOST]: [YANDEX_IP], [MSN_HOST]: [MSN_IP] };
  records.aaaa = { [YANDEX_HOST6]: [YANDEX_IP6] };
  dns.mode = 'answer';
  dns.queries.length = 0;
});

function checker(options: ReverseDnsOptions = {}) {
  const warnings: string[] = [];
  const reverse = createReverseDns(DOMAINS, { servers: [dns.server], timeoutMs: 500, ...options }, (message) =>
    warnings.push(message),
  );
  /** The answer once any lookup it starts has ended. */
  const settledCheck = async (crawler: string, address: string) => {
    const first = reverse.check(crawler, address, true);
    if (first !== 'loading') return first;
    await reverse.settled(address);
    return reverse.check(crawler, address, true);
  };
  return { reverse, warnings, settledCheck };
}

describe('reverseName', () => {
  it('spells the PTR name of IPv4, IPv4-mapped and IPv6 addresses as resolvers ask for them', () => {
    expect(reverseName(parseIp('5.255.253.1')!)).toBe('1.253.255.5.in-addr.arpa');
    expect(reverseName(parseIp('::ffff:5.255.253.1')!)).toBe('1.253.255.5.in-addr.arpa');
    for (const address of [YANDEX_IP, YANDEX_IP6, '::1', '2001:db8::'])
      expect(reverseName(parseIp(address)!)).toBe(testReverseName(address));
  });
});

describe('createReverseDns', () => {
  it('verifies an address whose host name is under the operator’s domain and resolves back to it, IPv4 and IPv6', async () => {
    const { reverse, settledCheck } = checker();
    expect(reverse.check('YandexBot', YANDEX_IP, true)).toBe('loading');
    expect(await settledCheck('YandexBot', YANDEX_IP)).toBe('in');
    expect(await settledCheck('YandexBot', `::ffff:${YANDEX_IP}`)).toBe('in'); // the same address, kept
    expect(await settledCheck('YandexBot', YANDEX_IP6)).toBe('in');
    expect(await settledCheck('msnbot', MSN_IP)).toBe('in');
    expect(dns.queries).toEqual([
      { name: testReverseName(YANDEX_IP), type: 'PTR' },
      { name: YANDEX_HOST, type: 'A' },
      { name: testReverseName(YANDEX_IP6), type: 'PTR' },
      { name: YANDEX_HOST6, type: 'AAAA' },
      { name: testReverseName(MSN_IP), type: 'PTR' },
      { name: MSN_HOST, type: 'A' },
    ]);
  });

  it('never verifies a scraper by the PTR record it writes itself', async () => {
    const { settledCheck } = checker();
    const cases: [string, string[], Record<string, string[]>][] = [
      // A Yandex name whose forward record (Yandex's) does not hold the scraper's address.
      ['45.13.22.1', [YANDEX_HOST], {}],
      // Yandex's name as a label of the scraper's own domain, or glued to it.
      ['45.13.22.2', ['yandex.com.scraper.example'], { 'yandex.com.scraper.example': ['45.13.22.2'] }],
      ['45.13.22.3', ['spider.evilyandex.com'], { 'spider.evilyandex.com': ['45.13.22.3'] }],
      // Another operator's host name: msnbot's, not YandexBot's.
      [MSN_IP, [MSN_HOST], { [MSN_HOST]: [MSN_IP] }],
      // No PTR record at all, or one that is no host name.
      [SCRAPER_IP, [], {}],
      ['45.13.22.4', ['spider yandex.com'], {}],
    ];
    for (const [address, ptr, a] of cases) {
      if (ptr.length > 0) records.ptr[testReverseName(address)] = ptr;
      Object.assign(records.a, a);
      expect(await settledCheck('YandexBot', address)).toBe('out');
    }
    // The glued and label names were never looked up forward: they are under no catalogue domain.
    expect(dns.queries.filter((query) => query.type === 'A').map((query) => query.name)).toEqual([
      YANDEX_HOST,
      MSN_HOST,
    ]);
  });

  it('asks nothing for a private or loopback address, one it cannot read, or a crawler with no domains', () => {
    const { reverse } = checker();
    for (const address of ['10.0.0.1', '127.0.0.1', '::1', '::ffff:192.168.1.1', 'fe80::1', 'yandex.com', undefined])
      expect(reverse.check('YandexBot', address, true)).toBe('out');
    expect(reverse.check('Twitterbot', YANDEX_IP, true)).toBeUndefined();
    expect(dns.queries).toEqual([]);
  });

  it('looks nothing up unless the answer could let the request through, and reads a kept answer either way', async () => {
    const { reverse, settledCheck } = checker();
    expect(reverse.check('YandexBot', YANDEX_IP, false)).toBe('out');
    expect(dns.queries).toEqual([]);
    expect(await settledCheck('YandexBot', YANDEX_IP)).toBe('in');
    expect(reverse.check('YandexBot', YANDEX_IP, false)).toBe('in');
  });

  it('keeps an answer for ttlMs, a failed lookup only for retryMs, and fails closed meanwhile', async () => {
    let clock = 1_000_000;
    const { reverse, settledCheck } = checker({ ttlMs: 60_000, retryMs: 5_000, now: () => clock });
    records.ptr[testReverseName(SCRAPER_IP)] = [];
    expect(await settledCheck('YandexBot', SCRAPER_IP)).toBe('out'); // NODATA: an answer, kept
    dns.mode = 'servfail';
    expect(await settledCheck('YandexBot', YANDEX_IP)).toBe('out'); // a server failure: unverified
    dns.mode = 'answer';
    const asked = dns.queries.length;
    expect(reverse.check('YandexBot', SCRAPER_IP, true)).toBe('out');
    expect(reverse.check('YandexBot', YANDEX_IP, true)).toBe('out');
    expect(dns.queries.length).toBe(asked);
    clock += 5_001; // the failure is asked again, the answer is not
    expect(reverse.check('YandexBot', SCRAPER_IP, true)).toBe('out');
    expect(await settledCheck('YandexBot', YANDEX_IP)).toBe('in');
    clock += 60_000;
    expect(reverse.check('YandexBot', YANDEX_IP, true)).toBe('loading');
    await reverse.settled(YANDEX_IP);
  });

  it('gives up a lookup the server never answers within timeoutMs, unverified', async () => {
    const { reverse, settledCheck } = checker({ timeoutMs: 300 });
    dns.mode = 'silent';
    const started = Date.now();
    expect(await settledCheck('YandexBot', YANDEX_IP)).toBe('out');
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(reverse.check('YandexBot', YANDEX_IP, true)).toBe('out');
  });

  it('holds at most maxLookups lookups at once, and two per network: beyond, unverified at once, nothing asked', async () => {
    const { reverse } = checker({ timeoutMs: 300, maxLookups: 3 });
    dns.mode = 'silent';
    expect(reverse.check('YandexBot', '45.13.22.10', true)).toBe('loading');
    expect(reverse.check('YandexBot', '45.13.22.11', true)).toBe('loading');
    expect(reverse.check('YandexBot', '45.13.22.12', true)).toBe('out'); // a third from that /24
    expect(reverse.check('YandexBot', '45.13.23.10', true)).toBe('loading');
    expect(reverse.check('YandexBot', YANDEX_IP, true)).toBe('out'); // all three taken
    expect(reverse.check('YandexBot', '45.13.22.10', true)).toBe('loading'); // the same lookup, not a second
    await Promise.all(['45.13.22.10', '45.13.22.11', '45.13.23.10'].map((address) => reverse.settled(address)));
    expect(dns.queries.map((query) => query.name)).toEqual(
      ['45.13.22.10', '45.13.22.11', '45.13.23.10'].map((address) => testReverseName(address)),
    );
  });

  it('counts no lookup of a crawler’s confirmed network against its block: the operator’s next network still gets room', async () => {
    const { Resolver } = await import('node:dns/promises');
    const real = new Resolver({ timeout: 500, tries: 1 });
    real.setServers([dns.server]);
    const { reverse, settledCheck } = checker({
      timeoutMs: 400,
      resolver: {
        // New addresses of Yandex's confirmed /24 hang; the rest is the DNS server's.
        resolvePtr: (name) =>
          name.endsWith('.253.255.5.in-addr.arpa') && name !== testReverseName(YANDEX_IP)
            ? new Promise<string[]>(() => undefined)
            : real.resolvePtr(name),
        resolve4: (name) => real.resolve4(name),
        resolve6: (name) => real.resolve6(name),
      },
    });
    expect(await settledCheck('YandexBot', YANDEX_IP)).toBe('in');
    const busy = Array.from({ length: 8 }, (_, i) => `5.255.253.${i + 100}`);
    expect(busy.map((address) => reverse.check('YandexBot', address, true))).toEqual(busy.map(() => 'loading'));
    const nextNetwork = '5.255.254.9'; // the same /16, a /24 not confirmed yet
    records.ptr[testReverseName(nextNetwork)] = ['spider-254-9.yandex.ru'];
    records.a['spider-254-9.yandex.ru'] = [nextNetwork];
    expect(await settledCheck('YandexBot', nextNetwork)).toBe('in');
    await Promise.all(busy.map((address) => reverse.settled(address)));
  });

  it('holds at most four lookups from one block of networks (an IPv6 /32 of /48s, an IPv4 /16), leaving the rest for others', async () => {
    const { reverse } = checker({ timeoutMs: 300 });
    dns.mode = 'silent';
    const tunnels = Array.from({ length: 40 }, (_, i) => `2001:470:${(i >> 1).toString(16)}::${i + 1}`);
    const answers = tunnels.map((address) => reverse.check('YandexBot', address, true));
    expect(answers.filter((answer) => answer === 'loading')).toHaveLength(4);
    const cloud = Array.from({ length: 10 }, (_, i) => `45.13.${i}.7`);
    expect(
      cloud.map((address) => reverse.check('YandexBot', address, true)).filter((a) => a === 'loading'),
    ).toHaveLength(4);
    expect(reverse.check('YandexBot', YANDEX_IP, true)).toBe('loading'); // a network of another block still gets a slot
    await Promise.all([...tunnels, ...cloud, YANDEX_IP].map((address) => reverse.settled(address)));
  });

  it('keeps at most maxAddresses answers of each kind, the oldest making room: unconfirmed ones never push out a confirmed one', async () => {
    const { reverse, settledCheck } = checker({ maxAddresses: 2 });
    expect(await settledCheck('YandexBot', YANDEX_IP)).toBe('in');
    for (const address of ['45.13.22.20', '45.13.22.21', '45.13.22.22'])
      expect(await settledCheck('YandexBot', address)).toBe('out');
    expect(reverse.check('YandexBot', YANDEX_IP, true)).toBe('in'); // still kept
    expect(reverse.check('YandexBot', '45.13.22.20', true)).toBe('loading'); // pushed out, asked again
    await reverse.settled('45.13.22.20');
    for (const n of [2, 3]) {
      const address = `5.255.253.${n}`;
      records.ptr[testReverseName(address)] = [`spider-${n}.yandex.ru`];
      records.a[`spider-${n}.yandex.ru`] = [address];
      expect(await settledCheck('YandexBot', address)).toBe('in');
    }
    expect(reverse.check('YandexBot', YANDEX_IP, true)).toBe('loading'); // the oldest confirmed one made room
    await reverse.settled(YANDEX_IP);
  });

  it('keeps room for the networks where crawlers were confirmed: a crowd of silent addresses elsewhere cannot get them charged', async () => {
    const { Resolver } = await import('node:dns/promises');
    const real = new Resolver({ timeout: 500, tries: 1 });
    real.setServers([dns.server]);
    // The scraper's own reverse zone, made to stay silent: each of its lookups holds a slot until timeoutMs.
    const scraperZone = '.0.7.4.0.1.0.0.2.ip6.arpa';
    const { reverse, settledCheck } = checker({
      timeoutMs: 400,
      maxLookups: 4,
      resolver: {
        resolvePtr: (name) =>
          name.endsWith(scraperZone) ? new Promise<string[]>(() => undefined) : real.resolvePtr(name),
        resolve4: (name) => real.resolve4(name),
        resolve6: (name) => real.resolve6(name),
      },
    });
    expect(await settledCheck('YandexBot', YANDEX_IP)).toBe('in'); // Yandex's /24 is a crawler's network now
    // Two per network: its /48s are many, but each holds only two of the four slots.
    const crowd = Array.from({ length: 20 }, (_, i) => `2001:470:${i.toString(16)}::${i + 1}`);
    const answers = crowd.map((address) => reverse.check('YandexBot', address, true));
    expect(answers.filter((answer) => answer === 'loading')).toHaveLength(4);
    expect(reverse.check('YandexBot', '2001:470:0::99', true)).toBe('out'); // its network's two are taken
    // A new address of Yandex's network is still looked up, and passes.
    const another = '5.255.253.9';
    records.ptr[testReverseName(another)] = ['spider-9.yandex.ru'];
    records.a['spider-9.yandex.ru'] = [another];
    expect(await settledCheck('YandexBot', another)).toBe('in');
    await Promise.all(crowd.map((address) => reverse.settled(address)));
  });

  it('reads at most four PTR names of an address, and looks up forward only those under a catalogue domain', async () => {
    const { settledCheck } = checker();
    const names = ['a.scraper.example', ...[1, 2, 3, 4, 5].map((n) => `fake-${n}.yandex.ru`)];
    records.ptr[testReverseName(SCRAPER_IP)] = names;
    records.a['fake-5.yandex.ru'] = [SCRAPER_IP];
    expect(await settledCheck('YandexBot', SCRAPER_IP)).toBe('out');
    expect(dns.queries.filter((query) => query.type === 'A').length).toBe(4);
  });

  it('asks nothing more once a lookup is past its deadline: a PTR answered just too late adds no forward query', async () => {
    const forward: string[] = [];
    const { settledCheck } = checker({
      timeoutMs: 200,
      resolver: {
        resolvePtr: () => new Promise((resolve) => setTimeout(() => resolve(['late.yandex.ru']), 300)),
        resolve4: async (name) => {
          forward.push(name);
          return [YANDEX_IP];
        },
        resolve6: async () => [],
      },
    });
    expect(await settledCheck('YandexBot', YANDEX_IP)).toBe('out');
    await new Promise((resolve) => setTimeout(resolve, 250)); // the PTR answer arrives meanwhile
    expect(forward).toEqual([]);
  });

  it('fails closed with a resolver that throws or answers nonsense, and warns of bad options', async () => {
    const strange = checker({
      resolver: {
        resolvePtr: async () => [42 as unknown as string, YANDEX_HOST],
        resolve4: () => {
          throw new Error('boom');
        },
        resolve6: async () => [],
      },
      timeoutMs: 0,
      maxLookups: 0,
    });
    expect(await strange.settledCheck('YandexBot', YANDEX_IP)).toBe('out');
    expect(strange.warnings).toEqual([
      expect.stringContaining('crawlerIps.reverseDns.timeoutMs must be'),
      expect.stringContaining('crawlerIps.reverseDns.maxLookups must be'),
    ]);
  });
});
