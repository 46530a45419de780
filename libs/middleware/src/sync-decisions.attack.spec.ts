/*
 * An attacker's tests of the decisions given without a promise (handleNow and the callback
 * adapters), readRoute's short way through plain targets, and failMode closed by default: each
 * asserts a refusal, never a served page.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { readRoute, signAccessToken, spelledRoute } from '@crawlgate/core';
import { FAKE_API_URL, FAKE_SITE_ID, fakeApi, fakePaymentV1, gateRequest, paid } from '../testing/fake-api';
import { heldCrawlerRanges } from '../testing/held-crawler-ranges';
import { createCrawlgate, type CrawlgateOptions } from './crawlgate';
import type { Decision } from './decision';
import { crawlgateExpress } from './adapters/express';
import { crawlgateFastify } from './adapters/fastify';

const SECRET = 'secret-of-the-site';
const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)';

const token = (url: string) => {
  const now = Math.floor(Date.now() / 1000);
  return signAccessToken(
    { gate_id: 'gate-1', site_id: FAKE_SITE_ID, url, kid: 'k1', iat: now, exp: now + 1800 },
    SECRET,
  );
};
const paymentV1 = fakePaymentV1;

const closers: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

function baseOptions(fetch: typeof globalThis.fetch, extra: Partial<CrawlgateOptions> = {}): CrawlgateOptions {
  return {
    apiUrl: FAKE_API_URL,
    siteId: FAKE_SITE_ID,
    siteToken: 'st_x',
    secret: SECRET,
    fetch,
    logger: { warn: () => undefined },
    crawlerIps: false, // no fetch of the operators' IP ranges from a unit test
    ...extra,
  };
}

const status = (decision: Decision) => (decision.kind === 'respond' ? decision.status : decision.kind);

describe('readRoute fast path against spelledRoute', () => {
  it('prices every hostile absolute-form target, in any order of origins, as the full reading does', () => {
    const origins = [
      'http://a.com',
      'HTTP://A.COM',
      'https://a.com:443',
      'http://a.com:80',
      'http://a.com:',
      'http://',
      'http:///',
      'http://a.com.',
      'http://[::1]',
      'http://[::1',
      'http://a b',
      'http://a\tb',
      'http://ä.com',
      'http://a.com:99999',
      'http://a.com:-1',
      'http://%41',
      'http://a@b',
      'http://0x7f.1',
      'http://1.2.3.4.5',
      'http://a_b',
      'http:\\\\a.com',
      'http:/a.com',
      'http:a.com',
      'ws://a.com',
      'file://a.com',
      'http://a.com?x',
      'http://a.com#x',
      'http://\u3002a',
      'http://ａ.com',
      'http://a.com\u0000',
      'http://a:b:c',
      'http:// a.com',
      ' http://a.com',
      'http://\u200ba.com',
      'http://A.com:0080',
      'http://a|b',
      'http://a<b',
      'http://[v1.x]',
      'http://4294967296',
      'http://0',
    ];
    const paths = [
      '/',
      '/premium/x',
      '/premium/x/',
      '/PREMIUM/x',
      '/premium/./x',
      '/premium/../x',
      '/premium;x',
      '/premium/x;',
      '/premium%2fx',
      '/pre%6dium/x',
      '/premium//x',
      '/premium\\x',
      '/premium/x?q',
      '/premium/x#f',
      '/premium/x ',
      '/premium/\tx',
      '/premium/x\n',
      '/…',
      '/a:b',
      '/@x',
      '/premium/x/.',
      '/premium/...',
      '//premium/x',
      '/robots.txt/../premium',
      '/premium/x' + 'y'.repeat(20_000),
    ];
    const differ: string[] = [];
    const check = (target: string) => {
      const fast = JSON.stringify(readRoute(target));
      const full = JSON.stringify(spelledRoute(target));
      if (fast !== full) differ.push(`${JSON.stringify(target)}: ${fast} vs ${full}`);
    };
    for (const origin of origins) for (const path of paths) check(origin + path);
    // The cached lastOrigin: a target right after another of a different origin.
    let seed = 7;
    const pick = <T>(list: T[]) => list[(seed = (seed * 1103515245 + 12345) & 0x7fffffff) % list.length];
    for (let i = 0; i < 10_000; i++) check(pick(origins) + pick(paths));
    expect(differ.slice(0, 10)).toEqual([]);
  });
});

describe('handleNow with the terms never loaded (failMode closed by default)', () => {
  const apiDown = (async () => {
    throw new TypeError('fetch failed');
  }) as typeof globalThis.fetch;

  it('never passes a charged bot, before or after the failed first load, whatever it presents', async () => {
    const gate = createCrawlgate(baseOptions(apiDown));
    closers.push(() => gate.close());
    const request = gateRequest;
    const early = gate.handleNow(request('/post/1', { 'user-agent': GPTBOT }));
    expect(early).toBeInstanceOf(Promise);
    expect(status(await early)).toBe(503);
    for (const headers of [
      { 'user-agent': GPTBOT },
      { 'user-agent': GPTBOT, 'x-crawlgate-token': token('/post/2') },
      { 'user-agent': 'curl/8', 'x-payment': paymentV1() },
      { 'user-agent': 'curl/8', authorization: `Bearer ${token('/other')}` },
    ]) {
      for (const url of ['/post/1', 'http://evil.example/post/1', '/POST/1;x', '/post/%2e%2e/1']) {
        const decision = await gate.handleNow(request(url, headers));
        expect([url, status(decision)]).toEqual([url, 503]);
      }
    }
  });

  it('a throwing isBot is a 503, on the sync path and on the signature path alike', async () => {
    const fake = fakeApi();
    const gate = createCrawlgate(
      baseOptions(fake.fetch, {
        isBot: () => {
          throw new Error('boom');
        },
      }),
    );
    closers.push(() => gate.close());
    await gate.ready();
    const now = gate.handleNow({ method: 'GET', url: '/post/1', headers: { 'user-agent': GPTBOT }, ip: '1' });
    expect(now).not.toBeInstanceOf(Promise);
    expect(status(now as Decision)).toBe(503);
    const signed = gate.handleNow({
      method: 'GET',
      url: '/post/1',
      headers: { 'user-agent': GPTBOT, signature: 'sig1=:AAAA:', 'signature-input': 'sig1=("@authority")' },
      ip: '1',
    });
    expect(status(await signed)).toBe(503);
  });
});

/** Real servers on loopback: the route counts how often it ran. */
async function fastifyServer(options: CrawlgateOptions) {
  const app: FastifyInstance = Fastify();
  let served = 0;
  await app.register(crawlgateFastify, options);
  app.get('/*', async () => {
    served++;
    return 'the page';
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  closers.push(() => app.close());
  const { port } = app.server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, served: () => served };
}

async function expressServer(options: CrawlgateOptions) {
  const app = express();
  let served = 0;
  const gate = crawlgateExpress(options);
  app.use(gate);
  app.use((_req, res) => {
    served++;
    res.send('the page');
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  closers.push(() => gate.close());
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, served: () => served };
}

describe.each([
  ['fastify', fastifyServer],
  ['express', expressServer],
] as const)('%s adapter under hostile answers', (_name, start) => {
  it('never runs the route for a bot whose payment the API answers badly, late, or for another path', async () => {
    let mode = 'other-path';
    const fake = fakeApi({
      verify: (gateId) => {
        if (mode === 'other-path') return paid(gateId, token('/post/2'), '/post/2');
        if (mode === '500') return { status: 500 };
        return { status: 200, body: '{not json' };
      },
    });
    const server = await start(
      baseOptions(fake.fetch, {
        isBot: (r) =>
          r.url.includes('throw')
            ? (() => {
                throw new Error('x');
              })()
            : undefined,
      }),
    );
    const get = (path: string, headers: Record<string, string>) =>
      fetch(server.url + path, { headers }).then(async (r) => ({ status: r.status, text: await r.text() }));
    for (const m of ['other-path', '500', 'garbage']) {
      mode = m;
      const answer = await get('/post/1', { 'user-agent': GPTBOT, 'x-payment': paymentV1() });
      expect([m, answer.status === 402 || answer.status === 503, answer.text.includes('the page')]).toEqual([
        m,
        true,
        false,
      ]);
    }
    // A token for another path, an unreadable payment, a throwing isBot (sync path), with and without a signature claim.
    const hostile: Record<string, string>[] = [
      { 'user-agent': GPTBOT, 'x-crawlgate-token': token('/post/2') },
      { 'user-agent': GPTBOT, 'x-payment': '%%%' },
      { 'user-agent': GPTBOT, signature: 'sig1=:AAAA:', 'signature-input': 'sig1=("@authority")' },
    ];
    for (const headers of hostile) {
      for (const path of ['/post/1', '/throw/1', '/POST/1/', '/post/1;jsessionid=1']) {
        const answer = await get(path, headers);
        expect([path, answer.status >= 400, answer.text.includes('the page')]).toEqual([path, true, false]);
      }
    }
    expect(server.served()).toBe(0);
  });
});

describe.each([
  ['fastify', fastifyServer],
  ['express', expressServer],
] as const)(
  '%s adapter, failMode open, terms lapsed while a crawler waits for its address check (helper-360)',
  (_name, start) => {
    it('charges the crawler once the terms load again: the route never runs', async () => {
      const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
      // The terms lapse by a clock that never goes back: moved on by hand, as five minutes of an outage would.
      let ahead = 0;
      const realNow = performance.now.bind(performance);
      jest.spyOn(performance, 'now').mockImplementation(() => realNow() + ahead);
      closers.push(() => jest.restoreAllMocks());
      const { crawlerIps, release: releaseRanges } = heldCrawlerRanges();
      const fake = fakeApi();
      const server = await start(
        baseOptions(fake.fetch, {
          failMode: 'open',
          refreshMs: 1_000,
          policy: { bots: { Googlebot: 'allow' } },
          crawlerIps,
        }),
      );
      const get = (userAgent: string) =>
        fetch(`${server.url}/post/1`, { headers: { 'user-agent': userAgent } }).then(async (r) => ({
          status: r.status,
          text: await r.text(),
        }));
      expect((await get(GPTBOT)).status).toBe(402);
      fake.answerWith((call) => (call === 'GET /v1/site' ? { status: 500 } : undefined));
      ahead += 6 * 60_000;
      expect((await get(GPTBOT)).status).toBe(503);
      // 127.0.0.1 is none of Google's addresses: this Googlebot pays, once its ranges say so.
      const waiting = get(GOOGLEBOT);
      await new Promise((resolve) => setTimeout(resolve, 100));
      fake.answerWith(() => undefined);
      ahead += 10_000;
      await get(GPTBOT); // starts the load
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await get(GPTBOT)).status).toBe(402); // loaded again
      releaseRanges();
      const answer = await waiting;
      expect([answer.status, answer.text.includes('the page')]).toEqual([402, false]);
      expect(server.served()).toBe(0);
    });
  },
);
