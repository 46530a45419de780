/*
 * The gate tried as a crawler that does not want to pay, against real Express, Fastify, Hono and
 * NestJS servers whose routers are as lenient as their options allow, the real API and the local
 * chain. The one rule: an unpaid bot never gets a page, whatever it sends and whatever the API does.
 * Pricing: /premium/* 0.5, /cheap/* 0.001, /free/* 0, /kiosk/[!A-Z]* 0.5, everything else 0.01.
 */

import { decodeBase64Json, encodeBase64Json, exactPaymentV2, type PaymentRequiredV2 } from '@crawlgate/core';
import { openGate } from '../../../apps/api/test/fixtures';
import { startTcpProxy, type TcpProxy } from '../../../apps/api/test/tcp-proxy';
import { fundUsdc, newWallet, signOffer, signPayment } from '../../../apps/api/test/test-agent';
import { createCrawlgate } from '../../../libs/middleware/src/crawlgate';
import { reverseName, startDnsServer, type DnsServer } from '../../../libs/middleware/testing/dns-server';
import { crawlgateExpress } from '@crawlgate/middleware/express';
import { crawlgateFastify } from '@crawlgate/middleware/fastify';
import { CrawlgateModule } from '@crawlgate/middleware/nest';
import { Controller, Get, Module, Param } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import middie from '@fastify/middie';
import express from 'express';
import Fastify, { type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { isIP, type AddressInfo } from 'node:net';
import type { CrawlgateOptions } from '../../../libs/middleware/src/crawlgate';
import { crawlerRanges } from './support/crawler-ranges';
import { BROWSER, CLAUDEBOT, GPTBOT, startGatedSite, type GatedSite } from './support/gated-site';
import { LENIENT_FRAMEWORKS, MISREAD_ROUTERS } from './support/lenient-sites';
import { rawRequest, type Answer } from './support/raw-request';
import { listening, listenNest, type SiteServer } from './support/site-servers';

let site: GatedSite;
let dns: DnsServer;
const YANDEX_IP = '5.255.253.1';
const YANDEX_HOST = 'spider-5-255-253-1.yandex.com';
const SCRAPER_IP = '45.13.22.7'; // writes itself a PTR record naming a Yandex host
beforeAll(async () => {
  dns = await startDnsServer({
    ptr: { [reverseName(YANDEX_IP)]: [YANDEX_HOST], [reverseName(SCRAPER_IP)]: [YANDEX_HOST] },
    a: { [YANDEX_HOST]: [YANDEX_IP] },
    aaaa: {},
  });
  site = await startGatedSite();
  await site.setPricing({
    default_price_usd: '0.01',
    rules: [
      { path: '/premium/*', price_usd: '0.5' },
      { path: '/cheap/*', price_usd: '0.001' },
      { path: '/free/*', price_usd: '0' },
      { path: '/static/premium/*', price_usd: '0.5' },
      { path: '/static/free/*', price_usd: '0' },
      // A class with letters, negated: a router that folds case serves /KIOSK/dog as /kiosk/dog.
      { path: '/kiosk/[!A-Z]*', price_usd: '0.5' },
    ],
  });
  for (const [i, framework] of LENIENT_FRAMEWORKS.entries())
    premiumPayers.set(framework.name, await payerKnownToSite(`/cheap/known-payer-${i}`));
}, 120_000);
afterAll(async () => {
  await site?.close();
  await dns?.close();
});

const get = rawRequest;

const json = (answer: Answer) => JSON.parse(answer.text) as Record<string, any>;
const served = (answer: Answer) => answer.status === 200 && answer.text.includes('content');

async function inBatches<T, R>(items: T[], size: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += size) results.push(...(await Promise.all(items.slice(i, i + size).map(run))));
  return results;
}

/**
 * A payer with 2 USDC that settled a cheap page of this site through the API before any junk was
 * sent: a site held off by junk simulates only payers that paid its publisher lately, never a fresh key.
 */
async function payerKnownToSite(path: string): Promise<ReturnType<typeof newWallet>> {
  const payer = newWallet();
  await fundUsdc(site.app, payer.address, '2');
  const gate = await openGate(site.app, site.site, path);
  const payment = await signPayment(site.app, payer, gate);
  const paid = await site.app.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } });
  expect(paid.status).toBe(200);
  return payer;
}

/** One per framework, made known in beforeAll: the bad signatures each framework's tests send hold the site off. */
const premiumPayers = new Map<string, ReturnType<typeof newWallet>>();

describe.each(LENIENT_FRAMEWORKS)('$name ($routing)', (framework) => {
  let server: SiteServer;
  const tag = framework.name.replace(/\W+/g, '-').toLowerCase();
  beforeAll(async () => {
    server = await framework.start(site.options());
  });
  afterAll(() => server?.close());

  it('answers a Googlebot User-Agent from outside Google’s ranges 402, whatever address headers it adds; from inside them it passes', async () => {
    const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
    const GOOGLE_IP = '66.249.66.1'; // in the public list, which does not hold loopback
    const spoofed = await framework.start(site.options({ crawlerIps: await crawlerRanges('public.json') }));
    try {
      const claims: Record<string, string>[] = [
        {},
        { 'x-forwarded-for': GOOGLE_IP },
        { 'x-forwarded-for': `${GOOGLE_IP}, 127.0.0.1` },
        { forwarded: `for=${GOOGLE_IP}` },
        { 'x-real-ip': GOOGLE_IP },
        { 'cf-connecting-ip': GOOGLE_IP },
        { 'true-client-ip': GOOGLE_IP },
      ];
      const answers = await Promise.all(
        claims.map((headers, i) => get(spoofed, `/spoof-${tag}-${i}`, { 'user-agent': GOOGLEBOT, ...headers })),
      );
      expect(answers.filter(served)).toHaveLength(0);
      expect(answers.map((answer) => answer.status)).toEqual(claims.map(() => 402));
    } finally {
      await spoofed.close();
    }
    // `server` runs with the default test lists, in which loopback is Google's network.
    expect(served(await get(server, `/verified-${tag}`, { 'user-agent': GOOGLEBOT }))).toBe(true);
  });

  it('answers a YandexBot User-Agent 402 unless its address’s host name is Yandex’s and resolves back, whatever address headers it adds', async () => {
    const YANDEXBOT = 'Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)';
    const reverseDns = { servers: [dns.server], timeoutMs: 500 };
    const fromLoopback = await framework.start(site.options({ crawlerIps: { reverseDns } }));
    // As behind a proxy the framework trusts: the address the test names is the visitor's.
    const behindProxy = await framework.start(
      site.options({
        crawlerIps: {
          reverseDns,
          clientIp: (request) => {
            const value = (request.headers as Record<string, string | string[] | undefined>)['x-test-client-ip'];
            return typeof value === 'string' ? value : undefined;
          },
        },
      }),
    );
    try {
      const claims: Record<string, string>[] = [
        {},
        { 'x-forwarded-for': YANDEX_IP },
        { forwarded: `for=${YANDEX_IP}` },
        { 'x-real-ip': YANDEX_IP },
        { 'cf-connecting-ip': YANDEX_IP },
      ];
      const answers = await Promise.all(
        claims.map((headers, i) => get(fromLoopback, `/yandex-${tag}-${i}`, { 'user-agent': YANDEXBOT, ...headers })),
      );
      expect(answers.map((answer) => answer.status)).toEqual(claims.map(() => 402));
      const spoof = await get(behindProxy, `/yandex-spoof-${tag}`, {
        'user-agent': YANDEXBOT,
        'x-test-client-ip': SCRAPER_IP,
      });
      expect([spoof.status, served(spoof)]).toEqual([402, false]);
      const real = await get(behindProxy, `/yandex-real-${tag}`, {
        'user-agent': YANDEXBOT,
        'x-test-client-ip': YANDEX_IP,
      });
      expect(served(real)).toBe(true);
    } finally {
      await fromLoopback.close();
      await behindProxy.close();
    }
  });

  it('answers an unpaid crawler sweeping 400 distinct priced URLs 402 every time: 0 pages', async () => {
    const answers = await inBatches(
      Array.from({ length: 400 }, (_, i) => `/sweep-${tag}-${i}`),
      25,
      (path) => get(server, path, { 'user-agent': GPTBOT }),
    );
    expect(answers.filter(served)).toHaveLength(0);
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 402));
  });

  it('serves 0 pages for the API errors a visitor can provoke: a NUL byte, a nested payload, 55 bad signatures', async () => {
    const nul = await get(server, '/premium/a%00', { 'user-agent': GPTBOT });
    expect(served(nul)).toBe(false);

    const offer = json(await get(server, `/premium/nested-${tag}`, { 'user-agent': GPTBOT }));
    const payment = await signPayment(site.app, newWallet(), offer as never);
    let nested: unknown = 1;
    for (let i = 0; i < 40; i++) nested = { a: nested };
    const hostile = encodeBase64Json({
      ...payment,
      payload: { ...payment.payload, signature: `0x${'ab'.repeat(65)}` },
      extra: nested,
    });
    expect(served(await get(server, `/premium/nested-${tag}`, { 'user-agent': GPTBOT, 'x-payment': hostile }))).toBe(
      false,
    );

    const page = `/cheap/badsig-${tag}`;
    const badOffer = json(await get(server, page, { 'user-agent': GPTBOT }));
    const stranger = newWallet();
    const answers = await inBatches(
      Array.from({ length: 55 }, (_, i) => i),
      11,
      async () => {
        const forged = await signPayment(site.app, site.agent, badOffer as never, { signer: stranger });
        return get(server, page, { 'user-agent': GPTBOT, 'x-payment': encodeBase64Json(forged) });
      },
    );
    expect(answers.filter(served)).toHaveLength(0);
    // 402 each, until the site's refused payments pass the API's budget (every framework here pays
    // the one site, the later ones while it is held off): the API then answers 429 and the gate 503.
    expect([...new Set(answers.map((a) => a.status))].filter((status) => status !== 402 && status !== 503)).toEqual([]);
  });

  it('never lets a paid payment header open another path, nor the same path for another visitor', async () => {
    const page = `/cheap/replay-${tag}`;
    const offer = json(await get(server, page, { 'user-agent': GPTBOT }));
    const xPayment = encodeBase64Json(await signPayment(site.app, site.agent, offer as never));
    const paid = await get(server, page, { 'user-agent': GPTBOT, 'x-payment': xPayment });
    expect(served(paid)).toBe(true);

    const replays = [
      await get(server, `/premium/b-${tag}`, { 'user-agent': GPTBOT, 'x-payment': xPayment }),
      await get(server, `/premium/c-${tag}`, { 'user-agent': GPTBOT, 'x-payment': xPayment }),
      await get(server, `/cheap/other-${tag}`, { 'user-agent': CLAUDEBOT, 'x-payment': xPayment }),
      await get(server, page, { 'user-agent': CLAUDEBOT, 'x-payment': xPayment }),
    ];
    expect(replays.map((r) => r.status)).toEqual([402, 402, 402, 402]);
    expect(replays.filter(served)).toHaveLength(0);
  });

  it('never lets a paid v2 PAYMENT-SIGNATURE, which names its gate, open another path', async () => {
    const page = `/cheap/replay-v2-${tag}`;
    const first = await get(server, page, { 'user-agent': GPTBOT });
    const required = decodeBase64Json(String(first.headers['payment-required'])) as PaymentRequiredV2;
    const signed = await signOffer(site.app, site.agent, json(first) as never);
    const signature = encodeBase64Json(
      exactPaymentV2(required.accepts[0], signed.authorization, signed.signature, { resource: required.resource }),
    );
    expect(served(await get(server, page, { 'user-agent': GPTBOT, 'payment-signature': signature }))).toBe(true);

    for (const [path, agent] of [
      [`/premium/v2-${tag}`, GPTBOT],
      [`/cheap/v2-other-${tag}`, GPTBOT],
      [`/v2-other-${tag}`, CLAUDEBOT],
    ]) {
      const replay = await get(server, path, { 'user-agent': agent, 'payment-signature': signature });
      expect({ path, status: replay.status, served: served(replay) }).toEqual({ path, status: 402, served: false });
    }
    // Read whole, these are the paid page (a router that resolves dot segments may serve it); cut at
    // ";" (Fastify's useSemicolonDelimiter), a premium one, which the payment never opens.
    for (const path of [`/premium/x;/../..${page}`, `/premium/x;/%2e%2e/%2e%2e${page}`]) {
      const replay = await get(server, path, { 'user-agent': GPTBOT, 'payment-signature': signature });
      expect({ path, premium: replay.text.includes('premium content') }).toEqual({ path, premium: false });
    }
  });

  it('never lets a paid v2 PAYMENT-SIGNATURE of a gate at the highest price open other pages through a target read as its path', async () => {
    // A wallet of its own: two premium pages would spend most of the shared agent's 1 USDC. The site
    // may be held off by the bad signatures sent above (every framework's): it takes a payer that
    // paid this site's publisher before them, never a fresh key.
    const payer = premiumPayers.get(framework.name)!;
    const payV2 = async (target: string) => {
      const first = await get(server, target, { 'user-agent': GPTBOT });
      expect(first.status).toBe(402);
      const required = decodeBase64Json(String(first.headers['payment-required'])) as PaymentRequiredV2;
      const signed = await signOffer(site.app, payer, json(first) as never);
      return encodeBase64Json(
        exactPaymentV2(required.accepts[0], signed.authorization, signed.signature, { resource: required.resource }),
      );
    };
    // Bought at the premium price, the highest; read whole, "/premium/x;/../anchor" is that page,
    // cut at ";" (Fastify's useSemicolonDelimiter) another premium one.
    const anchor = `/premium/anchor-${tag}`;
    const signature = await payV2(anchor);
    expect(served(await get(server, anchor, { 'user-agent': GPTBOT, 'payment-signature': signature }))).toBe(true);
    for (const secret of ['one', 'two']) {
      const target = `/premium/${secret}-${tag};/../anchor-${tag}`;
      const replay = await get(server, target, { 'user-agent': GPTBOT, 'payment-signature': signature });
      expect({ target, secret: replay.text.includes(`premium content ${secret}-`) }).toEqual({ target, secret: false });
    }
    // "http:///first" is the path / to the gate and /first to Express: paid once, it must not open /second.
    const absolute = await payV2(`http:///first-${tag}`).catch(() => undefined);
    if (absolute === undefined) return; // this server refuses absolute targets with no host
    const paid = await get(server, `http:///first-${tag}`, { 'user-agent': GPTBOT, 'payment-signature': absolute });
    expect(paid.text.includes(`content first-${tag}`) || paid.status !== 200).toBe(true);
    const replay = await get(server, `http:///second-${tag}`, { 'user-agent': GPTBOT, 'payment-signature': absolute });
    expect({ status: replay.status, second: replay.text.includes(`content second-${tag}`) }).toMatchObject({
      second: false,
    });
  });

  it('charges every spelling its router serves as a premium page at least the premium price', async () => {
    // The router really is lenient: some odd spellings reach the premium route.
    expect(await premiumSpellingsReached(server, framework.hasStatic)).toBeGreaterThan(1);
  });

  it('charges every case spelling of a page a rule with a negated class prices at that rule’s price', async () => {
    for (const spelling of ['/kiosk/dog', '/KIOSK/dog', '/Kiosk/Dog', '/kiosk/DOG']) {
      const bot = await get(server, spelling, { 'user-agent': GPTBOT });
      expect({ spelling, status: bot.status, price: bot.headers['crawler-price'] }).toEqual({
        spelling,
        status: 402,
        price: 'USD 0.5',
      });
    }
  });

  it('never opens an expensive page with a token for a cheap one', async () => {
    const offer = json(await get(server, `/cheap/token-${tag}`, { 'user-agent': GPTBOT }));
    const token = await site.payThroughApi(offer as never);
    expect(served(await get(server, `/cheap/token-${tag}`, { 'user-agent': GPTBOT, 'x-crawlgate-token': token }))).toBe(
      true,
    );
    for (const path of [`/premium/token-${tag}`, `/CHEAP/token-${tag}/../../premium/x`, `/premium/token-${tag}/`]) {
      expect(served(await get(server, path, { 'user-agent': GPTBOT, 'x-crawlgate-token': token }))).toBe(false);
    }
    // Read whole, these are the paid page (a router that resolves dot segments may serve it); cut at
    // ";" (Fastify's useSemicolonDelimiter), a premium one, which the token never opens.
    for (const path of [`/premium/x;/../../cheap/token-${tag}`, `/premium/x;/%2e%2e/%2e%2e/cheap/token-${tag}`]) {
      const answer = await get(server, path, { 'user-agent': GPTBOT, 'x-crawlgate-token': token });
      expect({ path, premium: answer.text.includes('premium content') }).toEqual({ path, premium: false });
    }
  });

  it('never opens a path with an escaped "?" or "#" with the token of the path before it', async () => {
    const page = `/cheap/cut-${tag}`;
    const token = await site.payThroughApi(json(await get(server, page, { 'user-agent': GPTBOT })) as never);
    expect(served(await get(server, page, { 'user-agent': GPTBOT, 'x-crawlgate-token': token }))).toBe(true);
    // The routers hand these to the route as ids "cut-…?x" and "cut-…#x": other pages, not paid for.
    for (const path of [`${page}%3Fx`, `${page}%3fx`, `${page}%23x`]) {
      const answer = await get(server, path, { 'user-agent': GPTBOT, 'x-crawlgate-token': token });
      expect({ path, status: answer.status, served: served(answer) }).toEqual({ path, status: 402, served: false });
    }
  });

  it('charges a free file\'s name followed by an escaped "?" or "#": to its router another page, no free file', async () => {
    // "/robots.txt%3Fx" is the page "robots.txt?x" to these routers (their "/:page" route), priced like any page.
    for (const path of [
      '/robots.txt%3Fx',
      '/robots.txt%3fx',
      '/llms.txt%23x',
      '/favicon.ico%3F',
      '/security.txt%23a',
      '/sitemap.xml%3F',
      '/sitemap.xml%3F/premium-article',
      // Inside a sitemap's name too: "sitemap?premium-a.xml" is a page of "/:page", not a sitemap.
      '/sitemap%3Fpremium-a.xml',
      '/sitemap%23premium-a.xml',
      '/wp-sitemap%3F..xml',
      '/sitemap.xml%3F.xml',
      '/sitemap%3Bpremium.xml',
    ]) {
      const bot = await get(server, path, { 'user-agent': GPTBOT });
      expect({ path, served: served(bot) }).toEqual({ path, served: false });
      // Where the router has a page for it (a person gets one), the bot is offered it at a price.
      if (served(await get(server, path, { 'user-agent': BROWSER })))
        expect({ path, status: bot.status }).toEqual({ path, status: 402 });
    }
    // The real free files, and a real query after one, stay free.
    for (const path of ['/robots.txt', '/robots.txt?x=1'])
      expect({ path, status: (await get(server, path, { 'user-agent': GPTBOT })).status }).toEqual({
        path,
        status: 200,
      });
  });

  it('never lets a target that reads as pay.json reach another route unpaid', async () => {
    // A router that cuts at ";" serves /premium/x for these; read whole, they are /.well-known/pay.json.
    for (const path of [
      '/premium/x;/../../.well-known/pay.json',
      '/premium/x;/%2e%2e/%2e%2e/.well-known/pay.json',
      '/x;/../.well-known/pay.json',
    ]) {
      const bot = await get(server, path, { 'user-agent': GPTBOT });
      expect({ path, served: served(bot) }).toEqual({ path, served: false });
    }
    expect((await get(server, '/.well-known/pay.json', { 'user-agent': GPTBOT })).status).toBe(200);
  });

  it('never serves a page for an absolute-form target a URL parser reads another way than the router', async () => {
    // Express routes these by Node's legacy url.parse (/premium/…); the WHATWG URL parser reads a
    // host "premium" and the path /… after it, or no URL at all.
    const page = `abs-${tag}`;
    const targets = [
      `http:///premium/${page}`,
      `http://@/premium/${page}`,
      `http://:/premium/${page}`,
      `https://:/premium/${page}`,
      `ws://@/premium/${page}`,
      `file://ftp:/premium/${page}`,
      `data://:80/premium/${page}`,
      `file://,@/premium/${page}`,
    ];
    for (const target of targets) {
      const bot = await get(server, target, { 'user-agent': GPTBOT });
      expect({ target, premium: bot.text.includes('premium content') }).toEqual({ target, premium: false });
    }
    // A token for /<page> (the default price) opens none of them, whatever the parser's reading.
    const token = await site.payThroughApi(json(await get(server, `/${page}`, { 'user-agent': GPTBOT })) as never);
    expect(served(await get(server, `/${page}`, { 'user-agent': GPTBOT, 'x-crawlgate-token': token }))).toBe(true);
    for (const target of targets) {
      const bot = await get(server, target, { 'user-agent': GPTBOT, 'x-crawlgate-token': token });
      expect({ target, premium: bot.text.includes('premium content') }).toEqual({ target, premium: false });
    }
  });

  it('charges a raw backslash, which a URL parser reads as "/" and these routers as a character', async () => {
    // To the gate's URL parser /free\\x is /free/x (free); to the router it is the page "free\\x".
    // A target that does not start with "/" some servers refuse outright (the socket closes): not served either.
    const refused = { status: 0, text: '', headers: {} } satisfies Answer;
    for (const path of [`/free\\bs-${tag}`, `/free\\..\\premium\\a`, `\\free/bs-${tag}`]) {
      const bot = await get(server, path, { 'user-agent': GPTBOT }).catch(() => refused);
      expect({ path, served: served(bot) }).toEqual({ path, served: false });
      const person = await get(server, path, { 'user-agent': BROWSER }).catch(() => refused);
      if (served(person)) expect({ path, status: bot.status }).toEqual({ path, status: 402 });
    }
  });

  it('charges /.well-known/ paths that name no well-known document: a router may bind ".well-known" to a parameter', async () => {
    // /:section/:page and /:section/:year/:page serve these as pages of a section named ".well-known".
    for (const path of [
      '/.well-known/big-story',
      `/.well-known/premium-${tag}`,
      '/.well-known/acme-challenge',
      // /:section/:year/:page serves these too: a token-shaped slug is no ACME challenge.
      '/.well-known/acme-challenge/big-story',
      '/.well-known/acme-challenge/LoqXcYV8q5ONbJQxbmR7SCTNo3tiAXDfowyjxAjEuX0',
      '/.well-known/pki-validation/big-story.html',
    ]) {
      const answer = await get(server, path, { 'user-agent': GPTBOT });
      expect([path, answer.status]).toEqual([path, 402]);
      expect(served(answer)).toBe(false);
    }
    // The documents themselves stay free (here the section route answers them).
    expect((await get(server, '/.well-known/security.txt', { 'user-agent': GPTBOT })).status).toBe(200);
  });

  it('still serves free pages and people', async () => {
    expect(served(await get(server, '/free/x', { 'user-agent': GPTBOT }))).toBe(true);
    expect(served(await get(server, '/premium/a', { 'user-agent': BROWSER }))).toBe(true);
    expect((await get(server, '/robots.txt', { 'user-agent': GPTBOT })).status).toBe(200);
  });
});

/**
 * Sends odd spellings of a premium page as a person and as GPTBot: the bot never gets premium
 * content, and wherever the person reached it, the bot was asked the premium price. How many the
 * person reached (the router's leniency, seen from outside).
 */
async function premiumSpellingsReached(server: SiteServer, hasStatic: boolean): Promise<number> {
  const spellings = [
    '/PREMIUM/a',
    '/Premium/a',
    '/premium/a/',
    '/premium/a;/../../robots.txt',
    '/premium/..;/a',
    '/premium/%2e%2e;/a',
    '/premium/a/.',
    '/premium/a/x/..',
    '//premium/a',
    '/premium//a',
  ];
  if (hasStatic)
    spellings.push(
      '/static/premium%2fa',
      '/static/premium%2Fa',
      '/static/free/..%2fpremium/a',
      '/static/free/%2e%2e%2fpremium/a',
    );
  let reached = 0;
  for (const spelling of spellings) {
    const person = await get(server, spelling, { 'user-agent': BROWSER });
    const bot = await get(server, spelling, { 'user-agent': GPTBOT });
    expect({ spelling, servedPremiumToBot: bot.text.includes('premium content') }).toEqual({
      spelling,
      servedPremiumToBot: false,
    });
    if (!person.text.includes('premium content')) continue;
    reached++;
    expect({ spelling, status: bot.status, price: bot.headers['crawler-price'] }).toEqual({
      spelling,
      status: 402,
      price: 'USD 0.5',
    });
  }
  return reached;
}

describe.each(MISREAD_ROUTERS)('$name ($routing)', (framework) => {
  let server: SiteServer;
  beforeAll(async () => {
    server = await framework.start(site.options());
  });
  afterAll(() => server?.close());

  it('charges the spellings the router really serves as a premium page, not those its settings suggest', async () => {
    // Case and trailing slash reach the premium route (this router is lenient, whatever its settings read).
    expect(await premiumSpellingsReached(server, false)).toBeGreaterThanOrEqual(3);
  });
});

/*
 * Express enters a mount by the raw path: a gate mounted at /premium never sees /%70remium/x, which
 * the routes and static files after it read as /premium/x. The gate cannot price what it never
 * sees: it warns, once, that it must sit at the app's root, where it prices every spelling.
 */
describe('Express with the gate mounted under a path', () => {
  const start = async (mount: string | undefined) => {
    const app = express();
    const gate = crawlgateExpress(site.options());
    if (mount) app.use(mount, gate);
    else app.use(gate);
    app.get('/:section/:slug', (req, res) => void res.send(`content ${req.params.section}/${req.params.slug}`));
    return listening(app.listen(0, '127.0.0.1'));
  };

  it('warns once that an escaped spelling of its mount path passes it by; mounted at the root, it charges that spelling', async () => {
    const mounted = await start('/premium');
    const root = await start(undefined);
    site.warnings.length = 0;
    try {
      const bot = { 'user-agent': GPTBOT };
      expect((await get(mounted, '/premium/mounted', bot)).status).toBe(402);
      expect((await get(mounted, '/premium/mounted-again', bot)).status).toBe(402);
      // What the warning is about: Express never hands this one to the gate.
      expect(served(await get(mounted, '/%70remium/mounted', bot))).toBe(true);
      expect(site.warnings.filter((warning) => /mounted at \/premium/.test(warning))).toHaveLength(1);
      expect((await get(root, '/%70remium/root', bot)).status).toBe(402);
    } finally {
      await mounted.close();
      await root.close();
    }
  });
});

/*
 * Express with `trust proxy` true takes the first X-Forwarded-For address as req.ip: one the
 * client wrote. The gate then judges crawlers by the connection's address (and says so), while
 * an app that trusts its proxies by address has their X-Forwarded-For read as before.
 */
describe('Express trusting every X-Forwarded-For', () => {
  const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
  const GOOGLE_IP = '66.249.66.1';
  const start = async (trust: boolean | string | number) => {
    const app = express();
    app.set('trust proxy', trust);
    app.use(crawlgateExpress(site.options({ crawlerIps: await crawlerRanges('public.json') })));
    app.get('/articles/:id', (req, res) => void res.send(`content ${req.params.id}`));
    return { ...(await listening(app.listen(0, '127.0.0.1'))), app };
  };

  it('judges a crawler by the connection’s address when the app trusts any X-Forwarded-For, and warns', async () => {
    const server = await start(true);
    try {
      const spoof = await get(server, '/articles/trust-all', { 'user-agent': GOOGLEBOT, 'x-forwarded-for': GOOGLE_IP });
      expect([spoof.status, served(spoof)]).toEqual([402, false]);
      expect(site.warnings.some((warning) => /trust proxy/.test(warning))).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('does so for a hop count of 64, a function trusting all with a truthy answer, and a setting made after the app answered its first request', async () => {
    const hops = await start(64);
    const truthy = await start(false);
    truthy.app.set('trust proxy', () => 1);
    const late = await start(false);
    try {
      const spoof = { 'user-agent': GOOGLEBOT, 'x-forwarded-for': GOOGLE_IP };
      expect((await get(hops, '/articles/trust-hops', spoof)).status).toBe(402);
      expect((await get(truthy, '/articles/trust-truthy', spoof)).status).toBe(402);
      expect((await get(late, '/articles/trust-late-0', spoof)).status).toBe(402);
      late.app.set('trust proxy', true);
      expect((await get(late, '/articles/trust-late-1', spoof)).status).toBe(402);
    } finally {
      await hops.close();
      await truthy.close();
      await late.close();
    }
  });

  it('serves a site whose trust proxy function throws on IPv6 addresses (an IPv4-only list), and warns of a hop count', async () => {
    const server = await start(false);
    server.app.set('trust proxy', (address: string) => {
      if (address.includes(':')) throw new Error('cannot match ipv6 address with non-ipv6 one');
      return address.startsWith('10.');
    });
    const hops = await start(2);
    site.warnings.length = 0;
    try {
      const spoof = { 'user-agent': GOOGLEBOT, 'x-forwarded-for': GOOGLE_IP };
      expect(served(await get(server, '/articles/trust-v4', { 'user-agent': BROWSER }))).toBe(true);
      expect((await get(server, '/articles/trust-v4', spoof)).status).toBe(402);
      await get(hops, '/articles/trust-two-hops', spoof);
      expect(site.warnings.filter((warning) => /X-Forwarded-For of any address/.test(warning))).toHaveLength(1);
    } finally {
      await server.close();
      await hops.close();
    }
  });

  it('serves people and judges crawlers by the connection’s address when reading req.ip throws (a function throwing on IPv6, on a dual-stack server)', async () => {
    const app = express();
    app.set('trust proxy', (address: string) => {
      if (address.includes(':')) throw new Error('cannot match ipv6 address with non-ipv6 one');
      return address.startsWith('10.');
    });
    app.use(crawlgateExpress(site.options({ crawlerIps: await crawlerRanges('public.json') })));
    app.get('/articles/:id', (req, res) => void res.send(`content ${req.params.id}`));
    // On '::' an IPv4 client's address reads ::ffff:127.0.0.1, which the function throws on.
    const server = await listening(app.listen(0, '::'));
    try {
      const person = await get(server, '/articles/trust-dual', {
        'user-agent': BROWSER,
        'x-forwarded-for': '10.0.0.9',
      });
      expect([person.status, served(person)]).toEqual([200, true]);
      const spoof = await get(server, '/articles/trust-dual', {
        'user-agent': GOOGLEBOT,
        'x-forwarded-for': GOOGLE_IP,
      });
      expect([spoof.status, served(spoof)]).toEqual([402, false]);
    } finally {
      await server.close();
    }
  });

  it('judges crawlers by the connection’s address when a middleware before the gate sets req.ip itself (request-ip’s mw), and warns', async () => {
    site.warnings.length = 0;
    const app = express();
    app.use((req, _res, next) => {
      const forwarded = req.headers['x-forwarded-for'];
      Object.defineProperty(req, 'ip', {
        get: () => (typeof forwarded === 'string' ? forwarded : req.socket.remoteAddress),
      });
      next();
    });
    app.use(crawlgateExpress(site.options({ crawlerIps: await crawlerRanges('public.json') })));
    app.get('/articles/:id', (req, res) => void res.send(`content ${req.params.id}`));
    const server = await listening(app.listen(0, '127.0.0.1'));
    try {
      const spoof = await get(server, '/articles/own-ip', { 'user-agent': GOOGLEBOT, 'x-forwarded-for': GOOGLE_IP });
      expect([spoof.status, served(spoof)]).toEqual([402, false]);
      expect(site.warnings.some((warning) => /req\.ip/.test(warning))).toBe(true);
      expect(served(await get(server, '/articles/own-ip', { 'user-agent': BROWSER }))).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('judges crawlers by the connection’s address when the app trusts every address behind the proxy it trusts, and warns of a depth of them', async () => {
    const behind = await start(false);
    behind.app.set('trust proxy', (address: string, hop: number) => hop > 0 || address === '127.0.0.1');
    const deep = await start(false);
    deep.app.set('trust proxy', (address: string, hop: number) => (hop === 0 ? address === '127.0.0.1' : hop < 10));
    site.warnings.length = 0;
    try {
      const spoof = { 'user-agent': GOOGLEBOT, 'x-forwarded-for': GOOGLE_IP };
      expect((await get(behind, '/articles/trust-behind', spoof)).status).toBe(402);
      expect(site.warnings.some((warning) => /first X-Forwarded-For address of anyone/.test(warning))).toBe(true);
      await get(deep, '/articles/trust-deep', spoof);
      expect(site.warnings.filter((warning) => /X-Forwarded-For of any address/.test(warning))).toHaveLength(1);
    } finally {
      await behind.close();
      await deep.close();
    }
  });

  it('reads X-Forwarded-For from a proxy the app trusts by address', async () => {
    const server = await start('loopback');
    try {
      const real = await get(server, '/articles/trust-loopback', {
        'user-agent': GOOGLEBOT,
        'x-forwarded-for': GOOGLE_IP,
      });
      expect(real.status).toBe(200);
      // Some proxies (Azure Application Gateway) write the client's port too, which req.ip keeps.
      for (const written of [`${GOOGLE_IP}:443`, `[::ffff:${GOOGLE_IP}]:443`]) {
        const withPort = await get(server, '/articles/trust-loopback', {
          'user-agent': GOOGLEBOT,
          'x-forwarded-for': written,
        });
        expect({ written, status: withPort.status }).toEqual({ written, status: 200 });
      }
    } finally {
      await server.close();
    }
  });
});

/*
 * Fastify's trustProxy (the app's own, or NestJS's FastifyAdapter's) cannot be read by a plugin,
 * but what it makes of an address can be asked of the request's `ip`: true, or a function trusting
 * everyone, takes the first X-Forwarded-For address, one the client wrote.
 */
describe.each([
  {
    name: 'Fastify',
    async start(options: CrawlgateOptions, trustProxy: FastifyServerOptions['trustProxy']): Promise<SiteServer> {
      const app = Fastify({ trustProxy });
      await app.register(crawlgateFastify, options);
      app.get<{ Params: { id: string } }>('/articles/:id', async (req) => `content ${req.params.id}`);
      await app.listen({ port: 0, host: '127.0.0.1' });
      return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, close: () => app.close() };
    },
  },
  {
    name: 'NestJS (Fastify)',
    async start(options: CrawlgateOptions, trustProxy: FastifyServerOptions['trustProxy']): Promise<SiteServer> {
      @Controller()
      class PagesController {
        @Get('articles/:id') article(@Param('id') id: string) {
          return `content ${id}`;
        }
      }
      @Module({ imports: [CrawlgateModule.forRoot(options)], controllers: [PagesController] })
      class SiteModule {}
      return listenNest(await NestFactory.create(SiteModule, new FastifyAdapter({ trustProxy }), { logger: false }));
    },
  },
])('$name trusting every X-Forwarded-For', ({ name, start }) => {
  const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
  const spoof = { 'user-agent': GOOGLEBOT, 'x-forwarded-for': '66.249.66.1' };
  const gated = async (trustProxy: FastifyServerOptions['trustProxy']) =>
    start(site.options({ crawlerIps: await crawlerRanges('public.json') }), trustProxy);

  it('judges a crawler by the connection’s address when trustProxy is true or trusts everyone, and warns', async () => {
    for (const [index, trustProxy] of [true, () => true, '0.0.0.0/1,128.0.0.0/1,::/1,8000::/1'].entries()) {
      site.warnings.length = 0;
      const server = await gated(trustProxy as FastifyServerOptions['trustProxy']);
      try {
        const answer = await get(server, `/articles/trust-all-${name.length}-${index}`, spoof);
        expect({ trustProxy: String(trustProxy), status: answer.status, served: served(answer) }).toEqual({
          trustProxy: String(trustProxy),
          status: 402,
          served: false,
        });
        expect(site.warnings.some((warning) => /trustProxy/.test(warning))).toBe(true);
      } finally {
        await server.close();
      }
    }
  });

  it('reads X-Forwarded-For from a proxy the app trusts by address', async () => {
    const server = await gated('127.0.0.1');
    try {
      expect((await get(server, `/articles/trust-loopback-${name.length}`, spoof)).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('judges a crawler by the connection’s address when trustProxy trusts every address behind the proxy it trusts, and warns', async () => {
    site.warnings.length = 0;
    const server = await gated((address: string, hop: number) => hop > 0 || address === '127.0.0.1');
    try {
      const answer = await get(server, `/articles/trust-behind-${name.length}`, spoof);
      expect([answer.status, served(answer)]).toEqual([402, false]);
      expect(site.warnings.some((warning) => /trustProxy/.test(warning))).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('warns of a trustProxy trusting any address to a depth behind the proxy it trusts', async () => {
    site.warnings.length = 0;
    const server = await gated((address: string, hop: number) => (hop === 0 ? address === '127.0.0.1' : hop < 10));
    try {
      await get(server, `/articles/trust-deep-${name.length}`, spoof);
      expect(site.warnings.filter((warning) => /X-Forwarded-For of any address/.test(warning))).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('warns of a trustProxy that trusts any address at the first hop (a hop count): safe only behind a proxy every request passes', async () => {
    site.warnings.length = 0;
    const server = await gated((_address: string, hop: number) => hop < 4);
    try {
      await get(server, `/articles/trust-hops-${name.length}`, spoof);
      expect(site.warnings.filter((warning) => /X-Forwarded-For of any address/.test(warning))).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});

describe('the Express adapter where no Express app set req.ip', () => {
  const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

  it('judges crawlers by the connection’s address in @fastify/middie on a Fastify trusting every X-Forwarded-For, and warns', async () => {
    site.warnings.length = 0;
    const app = Fastify({ trustProxy: true });
    await app.register(middie);
    app.use(crawlgateExpress(site.options({ crawlerIps: await crawlerRanges('public.json') })));
    app.get<{ Params: { id: string } }>('/articles/:id', async (req) => `content ${req.params.id}`);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const server = { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, close: () => app.close() };
    try {
      const spoof = await get(server, '/articles/middie', {
        'user-agent': GOOGLEBOT,
        'x-forwarded-for': '66.249.66.1',
      });
      expect([spoof.status, served(spoof)]).toEqual([402, false]);
      expect(site.warnings.some((warning) => /the framework did not set it/.test(warning))).toBe(true);
      expect(served(await get(server, '/articles/middie', { 'user-agent': BROWSER }))).toBe(true);
    } finally {
      await server.close();
    }
  });
});

describe('an address set by something other than the framework', () => {
  const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
  const spoof = { 'user-agent': GOOGLEBOT, 'x-forwarded-for': '66.249.66.1' };
  const fastifyServer = (app: ReturnType<typeof Fastify>) => ({
    url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
    close: () => app.close(),
  });

  it('judges crawlers by the connection’s address in an Express app mounted in @fastify/middie on a Fastify trusting every X-Forwarded-For, and warns', async () => {
    site.warnings.length = 0;
    const app = Fastify({ trustProxy: true });
    await app.register(middie);
    const moved = express(); // an Express app moved onto Fastify: its own trust proxy unset
    moved.use(crawlgateExpress(site.options({ crawlerIps: await crawlerRanges('public.json') })));
    moved.get('/articles/:id', (req, res) => void res.send(`content ${req.params.id}`));
    app.use(moved);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const server = fastifyServer(app);
    try {
      const answer = await get(server, '/articles/middie-app', spoof);
      expect([answer.status, served(answer)]).toEqual([402, false]);
      expect(site.warnings.some((warning) => /req\.ip/.test(warning))).toBe(true);
      expect(served(await get(server, '/articles/middie-app', { 'user-agent': BROWSER }))).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('judges crawlers by the connection’s address when a Fastify hook before the gate sets request.ip itself, and warns', async () => {
    site.warnings.length = 0;
    const app = Fastify();
    app.addHook('onRequest', (request, _reply, done) => {
      const forwarded = request.headers['x-forwarded-for'];
      Object.defineProperty(request, 'ip', {
        value: typeof forwarded === 'string' ? forwarded : request.socket.remoteAddress,
      });
      done();
    });
    await app.register(crawlgateFastify, site.options({ crawlerIps: await crawlerRanges('public.json') }));
    app.get<{ Params: { id: string } }>('/articles/:id', async (req) => `content ${req.params.id}`);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const server = fastifyServer(app);
    try {
      const answer = await get(server, '/articles/hook-ip', spoof);
      expect([answer.status, served(answer)]).toEqual([402, false]);
      expect(site.warnings.some((warning) => /req\.ip/.test(warning))).toBe(true);
      expect(served(await get(server, '/articles/hook-ip', { 'user-agent': BROWSER }))).toBe(true);
    } finally {
      await server.close();
    }
  });
});

describe('an address read by a getter other than the framework’s, or an Express request carrying raw', () => {
  const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
  const gate = async () => site.options({ crawlerIps: await crawlerRanges('public.json') });

  it('judges crawlers by the connection’s address when the app’s request gets an ip getter of its own (Express’s guide), and warns', async () => {
    site.warnings.length = 0;
    const app = express();
    // expressjs.com, "Overriding the Express API": the client's address from a header.
    Object.defineProperty(app.request, 'ip', {
      configurable: true,
      get(this: express.Request) {
        return this.get('Client-IP');
      },
    });
    app.use(crawlgateExpress(await gate()));
    app.get('/articles/:id', (req, res) => void res.send(`content ${req.params.id}`));
    const server = await listening(app.listen(0, '127.0.0.1'));
    try {
      const spoof = await get(server, '/articles/client-ip', { 'user-agent': GOOGLEBOT, 'client-ip': '66.249.66.1' });
      expect([spoof.status, served(spoof)]).toEqual([402, false]);
      expect(site.warnings.some((warning) => /req\.ip/.test(warning))).toBe(true);
    } finally {
      await server.close();
    }
  });

  /** What a getter of the app's own reads: the Node request under Fastify's. */
  type RawOf = { raw: { socket: { remoteAddress?: string }; headers: Record<string, unknown> } };

  /** A gated Fastify app; `ip`: a getter of the app's own, on a prototype put under each request. */
  async function gatedFastify(
    trustProxy?: FastifyServerOptions['trustProxy'],
    ip?: (request: FastifyRequest) => PropertyDescriptor,
  ): Promise<SiteServer> {
    const app = Fastify({ trustProxy });
    if (ip)
      app.addHook('onRequest', (request, _reply, done) => {
        Object.setPrototypeOf(request, Object.create(Object.getPrototypeOf(request), { ip: ip(request) }));
        done();
      });
    await app.register(crawlgateFastify, await gate());
    app.get<{ Params: { id: string } }>('/articles/:id', async (req) => `content ${req.params.id}`);
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, close: () => app.close() };
  }

  /** A gated Express app trusting `trust`. */
  async function gatedExpress(trust: unknown): Promise<SiteServer> {
    const app = express();
    app.set('trust proxy', trust);
    app.use(crawlgateExpress(await gate()));
    app.get('/articles/:id', (req, res) => void res.send(`content ${req.params.id}`));
    return listening(app.listen(0, '127.0.0.1'));
  }

  /** Each server's status for a Googlebot User-Agent from 127.0.0.1 writing `chain`. */
  async function statusesOf(servers: SiteServer[], chain: string, path: string) {
    const statuses = [];
    for (const server of servers)
      statuses.push((await get(server, path, { 'user-agent': GOOGLEBOT, 'x-forwarded-for': chain })).status);
    return statuses;
  }

  it('judges crawlers by the connection’s address when a Fastify hook puts a prototype with an ip getter under the request', async () => {
    // Reading the request it closed over, not the one it is asked of.
    const server = await gatedFastify(undefined, (request) => ({ get: () => request.headers['client-ip'] }));
    try {
      const spoof = await get(server, '/articles/hook-prototype', {
        'user-agent': GOOGLEBOT,
        'client-ip': '66.249.66.1',
      });
      expect([spoof.status, served(spoof)]).toEqual([402, false]);
      expect(served(await get(server, '/articles/hook-prototype', { 'user-agent': BROWSER }))).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('judges crawlers by the connection’s address when a Fastify getter keeps the first public X-Forwarded-For address (an ipware-style reader), or believes a lone one', async () => {
    // As ipaddr.js's range() === 'unicast' reads it: documentation addresses are reserved, not public.
    const isPublic = (address: string) =>
      !/^(?:127\.|10\.|192\.168\.|::1$|::ffff:127\.|192\.0\.2\.|198\.51\.100\.|203\.0\.113\.|2001:db8:)/.test(address);
    const forwardedOf = (request: RawOf) => String(request.raw.headers['x-forwarded-for'] ?? '');
    const servers = [
      await gatedFastify(undefined, () => ({
        get(this: RawOf) {
          const first = forwardedOf(this)
            .split(',')
            .map((address) => address.trim())
            .find(isPublic);
          return first ?? this.raw.socket.remoteAddress;
        },
      })),
      await gatedFastify(undefined, () => ({
        get(this: RawOf) {
          return isIP(forwardedOf(this)) ? forwardedOf(this) : this.raw.socket.remoteAddress; // one address: believed
        },
      })),
    ];
    try {
      expect(await statusesOf(servers, '66.249.66.1', '/articles/own-getter')).toEqual([402, 402]);
    } finally {
      await Promise.all(servers.map((server) => server.close()));
    }
  });

  it('verifies a real Googlebot behind a proxy the app trusts as any address that is not public, and reads a chain with empty entries as Express does', async () => {
    const notPublic = (address: string) => /^(?:127\.|10\.|192\.168\.|::1$|::ffff:127\.)/.test(address);
    const servers = [await gatedExpress(notPublic), await gatedFastify(notPublic)];
    try {
      for (const chain of ['66.249.66.1', '66.249.66.1,,127.0.0.1', '66.249.66.1, ,127.0.0.1', '66.249.66.1,'])
        expect({ chain, statuses: await statusesOf(servers, chain, '/articles/not-public') }).toEqual({
          chain,
          statuses: [200, 200],
        });
    } finally {
      await Promise.all(servers.map((server) => server.close()));
    }
  });

  it('judges crawlers by the connection’s address when a setting trusts every address but Google’s, even behind a proxy', async () => {
    const notGoogle = (address: string) => !/^(?:66\.249\.|::ffff:66\.249\.|2001:4860:)/.test(address);
    const servers = [await gatedExpress(notGoogle), await gatedFastify(notGoogle)];
    try {
      expect(await statusesOf(servers, '66.249.66.1, 8.8.4.4', '/articles/not-google')).toEqual([402, 402]);
    } finally {
      await Promise.all(servers.map((server) => server.close()));
    }
  });

  it('verifies a real Googlebot behind a load balancer the app trusts among all of Google’s ranges', async () => {
    const server = await gatedExpress(['loopback', '66.249.64.0/19', '35.191.0.0/16']);
    try {
      expect(await statusesOf([server], '66.249.66.1, 35.191.9.9', '/articles/google-lb')).toEqual([200]);
    } finally {
      await server.close();
    }
  });

  it('judges an Express request whose body parser kept its raw body in req.raw as Express’s (trusting everyone: the connection’s address)', async () => {
    const app = express();
    app.set('trust proxy', true);
    app.use(
      express.json({
        verify: (req, _res, body) => {
          (req as unknown as { raw: Buffer }).raw = body; // the webhook pattern
        },
      }),
    );
    app.use(crawlgateExpress(await gate()));
    app.post('/articles/:id', (req, res) => void res.send(`content ${req.params.id}`));
    const server = await listening(app.listen(0, '127.0.0.1'));
    try {
      const answer = await fetch(`${server.url}/articles/raw-body`, {
        method: 'POST',
        headers: { 'user-agent': GOOGLEBOT, 'x-forwarded-for': '66.249.66.1', 'content-type': 'application/json' },
        body: '{}',
      });
      const text = await answer.text();
      expect([answer.status, text.includes('content')]).toEqual([402, false]);
    } finally {
      await server.close();
    }
  });
});

describe('the API stopped after start-up', () => {
  let proxy: TcpProxy;
  let server: SiteServer;
  beforeAll(async () => {
    const { port } = new URL(site.app.baseUrl);
    proxy = await startTcpProxy('127.0.0.1', Number(port));
    server = await LENIENT_FRAMEWORKS[0].start(
      site.options({ apiUrl: `http://127.0.0.1:${proxy.port}`, timeoutMs: 500 }),
    );
    // Start-up: the pricing loads.
    await get(server, '/premium/warm-up', { 'user-agent': GPTBOT });
    await new Promise((resolve) => setTimeout(resolve, 300));
  });
  afterAll(async () => {
    await server?.close();
    await proxy?.close();
  }, 60_000);

  it('answers unpaid and paying crawlers 402 or 503, never the page', async () => {
    // Set-up, before the cut: the gate's call to the API may take over its 500 ms on a loaded
    // machine (503), so the offer is asked for again, at most five times.
    let before = await get(server, '/cheap/down', { 'user-agent': GPTBOT });
    for (let attempt = 1; before.status === 503 && attempt < 5; attempt++)
      before = await get(server, '/cheap/down', { 'user-agent': GPTBOT });
    expect(before.status).toBe(402);
    const offer = json(before);
    const xPayment = encodeBase64Json(await signPayment(site.app, site.agent, offer as never));
    await proxy.cut();
    const answers = [
      await get(server, '/premium/down', { 'user-agent': GPTBOT }),
      await get(server, '/down-page', { 'user-agent': GPTBOT }),
      await get(server, '/cheap/down', { 'user-agent': GPTBOT, 'x-payment': xPayment }),
    ];
    expect(answers.filter(served)).toHaveLength(0);
    expect(answers[0].status).toBe(402);
    expect(answers[1].status).toBe(402);
    expect([402, 503]).toContain(answers[2].status);
    expect(served(await get(server, '/free/x', { 'user-agent': GPTBOT }))).toBe(true);
    await proxy.restore();
  });
});

describe('the gate at crawler scale', () => {
  it('makes no API call for 1,000 unpaid bot requests once the pricing is loaded, and 402s every one', async () => {
    const calls: string[] = [];
    const gate = createCrawlgate(
      site.options({
        fetch: (input, init) => (
          calls.push(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname}`),
          fetch(input, init)
        ),
      }),
    );
    await gate.handle({ method: 'GET', url: '/warm-up', headers: { 'user-agent': BROWSER } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const before = calls.length;
    const decisions = await Promise.all(
      Array.from({ length: 1000 }, (_, i) =>
        gate.handle({ method: 'GET', url: `/scale/${i}`, headers: { 'user-agent': GPTBOT }, ip: '10.0.0.1' }),
      ),
    );
    expect(decisions.map((d) => (d.kind === 'respond' ? d.status : d.kind))).toEqual(decisions.map(() => 402));
    expect(calls.slice(before)).toEqual([]);
  });
});
