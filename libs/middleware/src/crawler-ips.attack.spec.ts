/*
 * A crawler that does not want to pay, claiming a search engine's User-Agent to be let through:
 * the gate (with the in-memory API) against operator range lists served by a real HTTP server on
 * loopback, and a real DNS server on loopback (through Node's resolver) for the operators that
 * document host names instead. Googlebot passes only from Google's published ranges, YandexBot
 * only from an address whose host name is Yandex's and resolves back; every way around it
 * (another address, a forwarded-for header, junk signature headers, the list down, slow or
 * garbled, a request racing its first fetch, a PTR record the scraper wrote, a look-alike domain,
 * DNS down or silent, a crowd of addresses) is charged, never served.
 */

import { signAccessToken } from '@crawlgate/core';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { reverseName, startDnsServer, type DnsRecords, type DnsServer } from '../testing/dns-server';
import { FAKE_API_URL, FAKE_SITE_ID, fakeApi } from '../testing/fake-api';
import { createCrawlgate, type CrawlgateOptions } from './crawlgate';
import type { Decision } from './decision';

const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';
const TWITTERBOT = 'Twitterbot/1.0';
const AHREFS = 'Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)';
const SCREAMING_FROG = 'Screaming Frog SEO Spider/21.0';
const LIGHTHOUSE =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Chrome-Lighthouse';
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';
const YANDEXBOT = 'Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)';
const MSNBOT = 'msnbot/2.0b (+http://search.msn.com/msnbot.htm)';
const BAIDUSPIDER = 'Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)';
const YANDEX_IP = '5.255.253.1';
const YANDEX_HOST = 'spider-5-255-253-1.yandex.com';
const SCRAPER_IP = '45.13.22.7';
const GOOGLE_IP = '66.249.66.1';
const OTHER_IP = '203.0.113.50';

type Behaviour = 'list' | 'down' | 'garbled' | 'stalled';

let server: Server;
let base: string;
let behaviour: Behaviour = 'list';
let served = 0;
/** Responses kept back while stalled, answered with the list by releaseStalled(). */
let stalled: ServerResponse[] = [];
const LIST = JSON.stringify({
  creationTime: '2026-11-28T00:00:00',
  prefixes: [{ ipv4Prefix: '66.249.64.0/19' }, { ipv6Prefix: '2001:4860:4801:10::/64' }],
});

function releaseStalled() {
  for (const response of stalled) response.writeHead(200, { 'content-type': 'application/json' }).end(LIST);
  stalled = [];
}

beforeAll(async () => {
  server = createServer((request, response) => {
    served++;
    if (behaviour === 'stalled') return void stalled.push(response);
    if (behaviour === 'down') return void response.writeHead(503).end();
    response.writeHead(200, { 'content-type': 'application/json' });
    if (behaviour === 'garbled') return void response.end('{"prefixes": "66.249.64.0/19"}');
    response.end(LIST);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  releaseStalled();
  behaviour = 'list';
  served = 0;
});

async function gateWith(extra: Partial<CrawlgateOptions> = {}) {
  const api = fakeApi();
  const warnings: string[] = [];
  const gate = createCrawlgate({
    apiUrl: FAKE_API_URL,
    siteId: FAKE_SITE_ID,
    siteToken: 'st_test',
    secret: 'secret',
    fetch: api.fetch,
    logger: { warn: (message) => warnings.push(message) },
    crawlerIps: { sources: { Googlebot: `${base}/googlebot.json`, GPTBot: `${base}/gptbot.json` }, timeoutMs: 300 },
    ...extra,
  });
  await gate.ready();
  const status = async (userAgent: string, ip: string | undefined, headers: Record<string, string> = {}) =>
    statusOf(
      await gate.handle({ method: 'GET', url: '/articles/1', headers: { 'user-agent': userAgent, ...headers }, ip }),
    );
  return { gate, api, warnings, status };
}

const statusOf = (decision: Decision) => (decision.kind === 'respond' ? decision.status : 200);

describe('crawlers verified by their published IP ranges', () => {
  it('lets Googlebot through from Google’s ranges only; the same User-Agent from anywhere else pays', async () => {
    const { gate, status } = await gateWith();
    try {
      expect(await status(GOOGLEBOT, GOOGLE_IP)).toBe(200);
      expect(await status(GOOGLEBOT, `::ffff:${GOOGLE_IP}`)).toBe(200);
      expect(await status(GOOGLEBOT, '2001:4860:4801:10::42')).toBe(200);
      expect(await status(GOOGLEBOT, OTHER_IP)).toBe(402);
      expect(await status(GOOGLEBOT, '66.249.96.1')).toBe(402); // just past the /19
      expect(await status(GOOGLEBOT, undefined)).toBe(402);
      expect(await status(GOOGLEBOT, 'garbage')).toBe(402);
      expect(served).toBe(1);
    } finally {
      await gate.close();
    }
  });

  it('charges Google’s fetchers that fetch for anyone (Rich Results Test, Sheets, feeds) by default, from Google’s own ranges too', async () => {
    const { gate, status } = await gateWith({
      crawlerIps: {
        sources: {
          'Google-InspectionTool': `${base}/googlebot.json`,
          'APIs-Google': `${base}/user-triggered.json`,
          'FeedFetcher-Google': `${base}/user-triggered.json`,
        },
      },
    });
    try {
      const richResultsTest =
        'Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.204 Mobile Safari/537.36 (compatible; Google-InspectionTool/1.0;)';
      const sheets = 'Mozilla/5.0 (compatible; GoogleDocs; apis-google; +http://docs.google.com)';
      const feeds = 'FeedFetcher-Google; (+http://www.google.com/feedfetcher.html)';
      for (const userAgent of [richResultsTest, sheets, feeds]) {
        expect([userAgent, await status(userAgent, GOOGLE_IP)]).toEqual([userAgent, 402]);
        await new Promise((resolve) => setTimeout(resolve, 50)); // its list loaded: still charged
        expect([userAgent, await status(userAgent, GOOGLE_IP)]).toEqual([userAgent, 402]);
      }
    } finally {
      await gate.close();
    }
  });

  it('charges SEO tools and page testers by default: anyone can run them against a page and keep what they fetched', async () => {
    const { gate, status } = await gateWith();
    try {
      for (const userAgent of [AHREFS, SCREAMING_FROG, LIGHTHOUSE])
        expect([userAgent, await status(userAgent, OTHER_IP)]).toEqual([userAgent, 402]);
    } finally {
      await gate.close();
    }
  });

  it('never takes a forwarded-for header or junk signature headers for Google’s address', async () => {
    const { gate, status } = await gateWith();
    try {
      for (const header of ['x-forwarded-for', 'x-real-ip', 'cf-connecting-ip', 'forwarded'])
        expect([header, await status(GOOGLEBOT, OTHER_IP, { [header]: GOOGLE_IP })]).toEqual([header, 402]);
      const junkSignature = {
        'signature-agent': '"https://googlebot.test"',
        'signature-input': 'sig1=("@authority");tag="web-bot-auth";keyid="x";created=1',
        signature: 'sig1=:AAAA:',
      };
      expect(await status(GOOGLEBOT, OTHER_IP, junkSignature)).toBe(402);
      // A signature that fails is not rescued by a good address either.
      expect(await status(GOOGLEBOT, GOOGLE_IP, junkSignature)).toBe(402);
    } finally {
      await gate.close();
    }
  });

  it.each<[Behaviour]>([['down'], ['garbled'], ['stalled']])(
    'charges every claimed Googlebot while its list is %s, and says why',
    async (state) => {
      behaviour = state;
      const { gate, status, warnings } = await gateWith();
      try {
        expect(await status(GOOGLEBOT, GOOGLE_IP)).toBe(402);
        expect(await status(GOOGLEBOT, OTHER_IP)).toBe(402);
        expect(warnings.join('\n')).toMatch(/IP ranges at .*googlebot\.json could not be loaded/);
      } finally {
        await gate.close();
      }
    },
  );

  it('makes the first requests wait for the list (together, one fetch), and a person for nothing', async () => {
    behaviour = 'stalled';
    const { gate, status } = await gateWith({
      crawlerIps: { sources: { Googlebot: `${base}/googlebot.json` }, timeoutMs: 5000 },
    });
    try {
      // A person's answer is given at once, with the list still on its way.
      const person = gate.handleNow({
        method: 'GET',
        url: '/articles/1',
        headers: { 'user-agent': BROWSER },
        ip: OTHER_IP,
      });
      expect(person).toEqual({ kind: 'pass' });
      const waiting = [status(GOOGLEBOT, GOOGLE_IP), status(GOOGLEBOT, OTHER_IP), status(GOOGLEBOT, GOOGLE_IP)];
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(served).toBe(1);
      releaseStalled();
      expect(await Promise.all(waiting)).toEqual([200, 402, 200]);
      expect(served).toBe(1);
    } finally {
      await gate.close();
    }
  });

  it('keeps the policy’s word: a blocked Googlebot from Google stays blocked, a charged GPTBot from OpenAI pays and counts as verified', async () => {
    const { gate, status, api } = await gateWith({ policy: { bots: { Googlebot: 'block' } } });
    try {
      expect(await status(GOOGLEBOT, GOOGLE_IP)).toBe(403);
      // Charged either way, so no request waits for OpenAI's list: the first is counted before it loaded.
      expect(await status(GPTBOT, GOOGLE_IP)).toBe(402);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await status(GPTBOT, GOOGLE_IP)).toBe(402);
      expect(await status(GPTBOT, OTHER_IP)).toBe(402);
      await gate.close();
      const crawlers = (api.reports[0] as { crawlers: { crawler: string; verified: boolean; requests: number }[] })
        .crawlers;
      expect(
        crawlers
          .filter((count) => count.crawler === 'GPTBot')
          .map(({ verified, requests }) => ({ verified, requests })),
      ).toEqual(
        expect.arrayContaining([
          { verified: true, requests: 1 },
          { verified: false, requests: 2 },
        ]),
      );
    } finally {
      await gate.close();
    }
  });

  it('lets an allowed GPTBot through from OpenAI’s ranges only', async () => {
    const { gate, status } = await gateWith({ policy: { bots: { GPTBot: 'allow' } } });
    try {
      expect(await status(GPTBOT, OTHER_IP)).toBe(402);
      expect(await status(GPTBOT, GOOGLE_IP)).toBe(200); // the test's OpenAI list is the same file
    } finally {
      await gate.close();
    }
  });

  it('never verifies a crawler that signs by its address: an unsigned ChatGPT-User from a listed one pays', async () => {
    const CHATGPT_USER =
      'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot';
    const { gate, status } = await gateWith({
      policy: { bots: { 'ChatGPT-User': 'allow' } },
      crawlerIps: { sources: { 'ChatGPT-User': `${base}/chatgpt-user.json` } },
    });
    try {
      expect(await status(CHATGPT_USER, GOOGLE_IP)).toBe(402);
      expect(served).toBe(0);
    } finally {
      await gate.close();
    }
  });

  it('requires a signature where the policy says so, whatever the address', async () => {
    const { gate, status } = await gateWith({ policy: { requireSignature: { categories: ['search-engine'] } } });
    try {
      expect(await status(GOOGLEBOT, GOOGLE_IP)).toBe(402);
    } finally {
      await gate.close();
    }
  });

  it('never lets a clientIp that throws or answers junk fail a person, nor verify a crawler', async () => {
    for (const clientIp of [
      () => {
        throw new Error('no header');
      },
      () => 42 as unknown as string,
      () => [GOOGLE_IP] as unknown as string,
    ]) {
      const { gate, status } = await gateWith({
        crawlerIps: { sources: { Googlebot: `${base}/googlebot.json` }, clientIp },
      });
      try {
        expect(await status(BROWSER, GOOGLE_IP)).toBe(200);
        expect(await status(GOOGLEBOT, GOOGLE_IP)).toBe(402);
      } finally {
        await gate.close();
      }
    }
  });

  it('warns of a source named for no catalogue crawler, and keeps checking the one it meant', async () => {
    const { gate, status, warnings } = await gateWith({
      crawlerIps: { sources: { Googlebot: `${base}/googlebot.json`, googlebot: false } },
    });
    try {
      expect(warnings).toEqual([expect.stringContaining('crawlerIps.sources names "googlebot"')]);
      expect(await status(GOOGLEBOT, OTHER_IP)).toBe(402);
    } finally {
      await gate.close();
    }
  });

  it('keeps the catalogue’s list for a source left undefined or given junk, and warns: a config slip never stops the check', async () => {
    const { gate, status, warnings } = await gateWith({
      crawlerIps: {
        sources: {
          Googlebot: undefined as unknown as string,
          bingbot: '' as string,
          Applebot: 42 as unknown as string,
        },
      },
    });
    try {
      expect(await status(GOOGLEBOT, OTHER_IP)).toBe(402);
      expect(warnings.filter((warning) => /crawlerIps\.sources/.test(warning))).toEqual([
        expect.stringContaining('"Googlebot"'),
        expect.stringContaining('"bingbot"'),
        expect.stringContaining('"Applebot"'),
      ]);
    } finally {
      await gate.close();
    }
  });

  it('never verifies a crawler the catalogue has no list for whose source was given wrongly, and takes crawlerIps: null as on', async () => {
    const YANDEX = 'Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)';
    const { gate, status } = await gateWith({
      crawlerIps: { sources: { YandexBot: undefined as unknown as string } },
    });
    const nullOptions = await gateWith({ crawlerIps: null as unknown as false });
    try {
      expect(await status(YANDEX, OTHER_IP)).toBe(402);
      expect(await nullOptions.status(BROWSER, OTHER_IP)).toBe(200);
    } finally {
      await gate.close();
      await nullOptions.gate.close();
    }
  });

  it('warns of a source for a crawler that is verified by its signature only, or is a robots.txt token', async () => {
    const { gate, warnings } = await gateWith({
      crawlerIps: { sources: { 'ChatGPT-User': `${base}/x.json`, 'Google-Extended': `${base}/x.json` } },
    });
    try {
      expect(warnings).toEqual([
        expect.stringContaining('"ChatGPT-User"'),
        expect.stringContaining('"Google-Extended"'),
      ]);
    } finally {
      await gate.close();
    }
  });

  it('takes a timeout no timer can hold as the default, with a warning, instead of timing every list out', async () => {
    const { gate, status, warnings } = await gateWith({
      crawlerIps: { sources: { Googlebot: `${base}/googlebot.json` }, timeoutMs: 3_000_000_000 },
    });
    try {
      expect(await status(GOOGLEBOT, GOOGLE_IP)).toBe(200);
      expect(warnings).toEqual([expect.stringContaining('crawlerIps.timeoutMs')]);
    } finally {
      await gate.close();
    }
  });

  it('says once when claims come from a private address (a proxy not trusted), and still charges them', async () => {
    const { gate, status, warnings } = await gateWith();
    try {
      expect(await status(GOOGLEBOT, '10.0.0.7')).toBe(402);
      expect(await status(GOOGLEBOT, '127.0.0.1')).toBe(402);
      expect(warnings.filter((warning) => /private or loopback address/.test(warning))).toEqual([
        expect.stringContaining('requests naming Googlebot come from 10.0.0.7'),
      ]);
    } finally {
      await gate.close();
    }
  });

  it('reads the address where clientIp says, and trusts User-Agents again only when told (crawlerIps: false)', async () => {
    const fromHeader = await gateWith({
      crawlerIps: {
        sources: { Googlebot: `${base}/googlebot.json` },
        clientIp: (request) => request.headers['cf-connecting-ip'] as string | undefined,
      },
    });
    const off = await gateWith({ crawlerIps: false });
    try {
      expect(await fromHeader.status(GOOGLEBOT, OTHER_IP, { 'cf-connecting-ip': GOOGLE_IP })).toBe(200);
      expect(await fromHeader.status(GOOGLEBOT, GOOGLE_IP)).toBe(402);
      expect(await off.status(GOOGLEBOT, OTHER_IP)).toBe(200);
      // Crawlers that publish no ranges are identified by User-Agent, as before.
      expect(await off.status(TWITTERBOT, OTHER_IP)).toBe(200);
      expect(await fromHeader.status(TWITTERBOT, OTHER_IP)).toBe(200);
    } finally {
      await fromHeader.gate.close();
      await off.gate.close();
    }
  });
});

describe('crawlers verified by forward-confirmed reverse DNS', () => {
  let dns: DnsServer;
  const records: DnsRecords = { ptr: {}, a: {}, aaaa: {} };

  beforeAll(async () => {
    dns = await startDnsServer(records);
  });
  afterAll(() => dns.close());
  beforeEach(() => {
    records.ptr = { [reverseName(YANDEX_IP)]: [YANDEX_HOST] };
    records.a = { [YANDEX_HOST]: [YANDEX_IP] };
    records.aaaa = {};
    dns.mode = 'answer';
    dns.queries.length = 0;
  });

  /** The DNS server's answers, through Node's resolver. */
  const dnsOptions = (extra: object = {}) => ({
    crawlerIps: { reverseDns: { servers: [dns.server], timeoutMs: 300, ...extra } },
  });

  it('lets YandexBot through from Yandex’s hosts only; the same User-Agent from anywhere else pays', async () => {
    const { gate, status } = await gateWith(dnsOptions());
    try {
      expect(await status(YANDEXBOT, YANDEX_IP)).toBe(200);
      expect(await status(YANDEXBOT, `::ffff:${YANDEX_IP}`)).toBe(200);
      expect(await status(YANDEXBOT, SCRAPER_IP)).toBe(402); // no PTR record
      expect(await status(MSNBOT, SCRAPER_IP)).toBe(402);
      expect(await status(BAIDUSPIDER, SCRAPER_IP)).toBe(402);
      expect(await status(MSNBOT, YANDEX_IP)).toBe(402); // a Yandex host is no Bing crawler
      expect(await status(YANDEXBOT, undefined)).toBe(402);
    } finally {
      await gate.close();
    }
  });

  it('never takes the PTR record a scraper writes for its own address, nor a look-alike domain', async () => {
    const { gate, status } = await gateWith(dnsOptions());
    try {
      const cases: [string, string, string[]][] = [
        ['45.13.22.1', YANDEX_HOST, []], // Yandex's name; its forward record is Yandex's, not the scraper's
        ['45.13.22.2', 'spider.yandex.com.scraper.example', ['45.13.22.2']],
        ['45.13.22.3', 'spider.notyandex.com', ['45.13.22.3']],
        ['45.13.22.4', 'yandex.com', []],
      ];
      for (const [address, name, forward] of cases) {
        records.ptr[reverseName(address)] = [name];
        if (forward.length > 0) records.a[name] = forward;
        expect([address, await status(YANDEXBOT, address)]).toEqual([address, 402]);
      }
    } finally {
      await gate.close();
    }
  });

  it('charges while DNS fails or stays silent, and the page waits no longer than timeoutMs', async () => {
    const { gate, status } = await gateWith(dnsOptions());
    try {
      dns.mode = 'servfail';
      expect(await status(YANDEXBOT, YANDEX_IP)).toBe(402);
      dns.mode = 'silent';
      const started = Date.now();
      expect(await status(YANDEXBOT, '5.255.253.2')).toBe(402);
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      await gate.close();
    }
  });

  it('serves none of a crowd of spoofed addresses at once, and bounds the lookups', async () => {
    const { gate, status } = await gateWith(dnsOptions({ maxLookups: 8 }));
    try {
      dns.mode = 'silent';
      // From 50 networks, and 20 addresses of one: at most maxLookups queries, two per network.
      const addresses = Array.from({ length: 50 }, (_, i) => `45.${i + 1}.23.1`);
      const oneNetwork = Array.from({ length: 20 }, (_, i) => `45.13.23.${i + 1}`);
      const statuses = await Promise.all([...oneNetwork, ...addresses].map((address) => status(YANDEXBOT, address)));
      expect(statuses).toEqual([...oneNetwork, ...addresses].map(() => 402));
      expect(dns.queries.length).toBe(8);
      expect(dns.queries.filter((query) => query.name.endsWith('.23.13.45.in-addr.arpa'))).toHaveLength(2);
    } finally {
      await gate.close();
    }
  });

  it('makes concurrent first requests from one address wait for one lookup', async () => {
    const { gate, status } = await gateWith(dnsOptions());
    try {
      const statuses = await Promise.all([1, 2, 3, 4].map(() => status(YANDEXBOT, YANDEX_IP)));
      expect(statuses).toEqual([200, 200, 200, 200]);
      expect(dns.queries.filter((query) => query.type === 'PTR').length).toBe(1);
    } finally {
      await gate.close();
    }
  });

  it('asks DNS nothing for a person, a crawler the policy charges or blocks, or one the policy must see signed', async () => {
    const { gate, status } = await gateWith({
      ...dnsOptions(),
      policy: { bots: { YandexBot: 'charge', Baiduspider: 'block' }, requireSignature: { bots: ['msnbot'] } },
    });
    try {
      expect(await status(BROWSER, SCRAPER_IP)).toBe(200);
      expect(await status(YANDEXBOT, YANDEX_IP)).toBe(402);
      expect(await status(BAIDUSPIDER, SCRAPER_IP)).toBe(403);
      expect(await status(MSNBOT, SCRAPER_IP)).toBe(402);
      expect(dns.queries).toEqual([]);
    } finally {
      await gate.close();
    }
  });

  it('counts a crawler verified by its host name as verified, and the spoof as not', async () => {
    const { gate, api, status } = await gateWith(dnsOptions());
    expect(await status(YANDEXBOT, YANDEX_IP)).toBe(200);
    expect(await status(YANDEXBOT, SCRAPER_IP)).toBe(402);
    await gate.close();
    const crawlers = api.reports.flatMap((report) => (report as { crawlers?: unknown[] }).crawlers ?? []);
    expect(crawlers).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ crawler: 'YandexBot', action: 'allowed', verified: true }),
        expect.objectContaining({ crawler: 'YandexBot', action: 'charged', verified: false }),
      ]),
    );
  });

  it('starts no lookup for a visitor that opened the page with its token (counted only)', async () => {
    const { gate, status } = await gateWith(dnsOptions());
    try {
      const now = Math.floor(Date.now() / 1000);
      const token = signAccessToken(
        { gate_id: 'gate-1', site_id: FAKE_SITE_ID, url: '/articles/1', kid: 'k1', iat: now, exp: now + 600 },
        'secret',
      );
      expect(await status(YANDEXBOT, SCRAPER_IP, { authorization: `Bearer ${token}` })).toBe(200);
      expect(dns.queries).toEqual([]);
    } finally {
      await gate.close();
    }
  });

  it('fails closed, with a warning and no throw, on servers the resolver cannot use', async () => {
    for (const servers of [['not-an-ip'], '127.0.0.1' as unknown as string[]]) {
      const { gate, status, warnings } = await gateWith({ crawlerIps: { reverseDns: { servers, timeoutMs: 300.5 } } });
      try {
        expect(await status(YANDEXBOT, YANDEX_IP)).toBe(402);
        expect(warnings).toEqual([expect.stringContaining('crawlerIps.reverseDns.servers')]);
      } finally {
        await gate.close();
      }
    }
  });

  it('stops checking a crawler whose source is turned off (sources: { YandexBot: false }), as for the ranges', async () => {
    const { gate, status } = await gateWith({
      crawlerIps: { sources: { YandexBot: false }, reverseDns: { servers: [dns.server], timeoutMs: 300 } },
    });
    try {
      expect(await status(YANDEXBOT, SCRAPER_IP)).toBe(200);
      expect(await status(MSNBOT, SCRAPER_IP)).toBe(402); // the others are still checked
      expect(dns.queries.map((query) => query.name)).toEqual([reverseName(SCRAPER_IP)]);
    } finally {
      await gate.close();
    }
  });

  it('takes these crawlers at their User-Agent again only when told (reverseDns: false)', async () => {
    const { gate, status } = await gateWith({ crawlerIps: { reverseDns: false } });
    try {
      expect(await status(YANDEXBOT, SCRAPER_IP)).toBe(200);
      expect(dns.queries).toEqual([]);
    } finally {
      await gate.close();
    }
  });
});
