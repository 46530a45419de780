/*
 * The always-free paths (robots.txt, sitemap.xml, security.txt, /.well-known/*, llms.txt) and the
 * RSL license document the gate serves, tried as a crawler that wants a priced page for free by
 * spelling it as one of them. Real servers on loopback: the lenient sites of attacks.spec.ts, plus
 * an Express and a Fastify site whose routers are case-sensitive and strict, with a catch-all
 * /:page route and a static file server at the root (which resolves dot segments and %2F).
 * Pricing: /premium/* 0.5, everything else 0.01.
 */

import fastifyStatic from '@fastify/static';
import express from 'express';
import Fastify from 'fastify';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crawlgateExpress } from '@crawlgate/middleware/express';
import { crawlgateFastify } from '@crawlgate/middleware/fastify';
import type { CrawlgateOptions } from '../../../libs/middleware/src/crawlgate';
import { BROWSER, GPTBOT, startGatedSite, type GatedSite } from './support/gated-site';
import { content, LENIENT_FRAMEWORKS, type LenientFramework } from './support/lenient-sites';
import { rawRequest, type Answer } from './support/raw-request';
import { listening, type SiteServer } from './support/site-servers';

const FREE_FILES = ['robots.txt', 'llms.txt', 'sitemap.xml', 'security.txt'];

/** premium/a and each free file as static files: the static server is the lenient reader of paths. */
function rootStaticDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'crawlgate-licensing-'));
  mkdirSync(join(dir, 'premium'));
  mkdirSync(join(dir, '.well-known'));
  writeFileSync(join(dir, 'premium', 'a'), content('premium', 'static'));
  writeFileSync(join(dir, '.well-known', 'x'), 'well-known file');
  for (const file of FREE_FILES) writeFileSync(join(dir, file), `free file ${file}`);
  return dir;
}

const STRICT_FRAMEWORKS: LenientFramework[] = [
  {
    name: 'Express strict',
    routing: 'case sensitive routing, strict routing; express.static at /',
    hasStatic: true,
    async start(options) {
      const app = express();
      app.set('case sensitive routing', true);
      app.set('strict routing', true);
      app.use(crawlgateExpress(options));
      app.use(express.static(rootStaticDir(), { dotfiles: 'allow' }));
      app.get('/premium/:id', (req, res) => void res.type('text/html').send(content('premium', String(req.params.id))));
      app.get('/:page', (req, res) => void res.type('text/html').send(content('default', String(req.params.page))));
      return listening(app.listen(0, '127.0.0.1'));
    },
  },
  {
    name: 'Fastify strict',
    routing: 'caseSensitive (default), useSemicolonDelimiter; @fastify/static at /',
    hasStatic: true,
    async start(options) {
      const app = Fastify({ routerOptions: { useSemicolonDelimiter: true } as object });
      await app.register(crawlgateFastify, options);
      await app.register(fastifyStatic, { root: rootStaticDir(), prefix: '/', dotfiles: 'allow', wildcard: false });
      app.get<{ Params: { id: string } }>('/premium/:id', async (req, reply) =>
        reply.type('text/html').send(content('premium', req.params.id)),
      );
      app.get<{ Params: { page: string } }>('/:page', async (req, reply) =>
        reply.type('text/html').send(content('default', req.params.page)),
      );
      await app.listen({ port: 0, host: '127.0.0.1' });
      return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, close: () => app.close() };
    },
  },
];

let site: GatedSite;
beforeAll(async () => {
  site = await startGatedSite();
  await site.setPricing({ default_price_usd: '0.01', rules: [{ path: '/premium/*', price_usd: '0.5' }] });
}, 120_000);
afterAll(() => site?.close());

const send = rawRequest;

/**
 * A page of a priced route (or the premium static file): not a free file, nor the catch-all's page
 * for a free file's exact name (what the router serves for /llms.txt itself), nor the gate's own answer.
 */
const pageServed = (answer: Answer) =>
  answer.status === 200 && /<p>\w+ content (?!(?:robots\.txt|llms\.txt|sitemap\.xml|security\.txt)<)/.test(answer.text);

/** Spellings of priced pages dressed up as free paths. */
const ATTACKS = [
  '/.well-known/../premium/a',
  '/.well-known/%2e%2e/premium/a',
  '/.well-known/%2E%2E/premium/a',
  '/.well-known/..%2Fpremium%2Fa',
  '/.well-known/..%2fpremium/a',
  '/.well-known/x/..%2F..%2Fpremium%2Fa',
  '/%2Ewell-known/..%2Fpremium%2Fa',
  '/.WELL-KNOWN/../premium/a',
  '/robots.txt/..%2Fpremium',
  '/robots.txt/..%2Fpremium%2Fa',
  '/robots.txt/../premium/a',
  '/robots.txt;/../premium/a',
  '/robots.txt%2F..%2Fpremium%2Fa',
  '/ROBOTS.TXT',
  '/Robots.txt',
  '/robots.txt/',
  '/LLMS.TXT',
  '/llms.txt;x',
  '/llms.txt;/../premium/a',
  '/llms.txt/',
  '/llms.txt%3Bx',
  '/llms.txt%2F..%2Fpremium%2Fa',
  '/sitemap.xml/..%2Fpremium%2Fa',
  '/sitemap.xml;x',
  '/security.txt%2F..%2Fpremium%2Fa',
  '/SECURITY.TXT',
  '/license.xml;x',
  '/LICENSE.XML',
  '/license.xml/',
  '/license.xml/..%2Fpremium%2Fa',
  '/license.xml/../premium/a',
  '/premium/a;/../../llms.txt',
  '/premium/a/..%2F..%2Frobots.txt',
];

describe.each([...STRICT_FRAMEWORKS, ...LENIENT_FRAMEWORKS])('$name ($routing)', (framework) => {
  let server: SiteServer;
  beforeAll(async () => {
    const options: CrawlgateOptions = site.options();
    server = await framework.start(options);
  });
  afterAll(() => server?.close());

  it('serves no priced page free to a bot through a spelling of a free path or the license document', async () => {
    let reached = 0;
    for (const path of ATTACKS) {
      const person = await send(server, path, { 'user-agent': BROWSER });
      const bot = await send(server, path, { 'user-agent': GPTBOT });
      expect({ path, servedToBot: pageServed(bot) }).toEqual({ path, servedToBot: false });
      if (!pageServed(person)) continue;
      reached++;
      const price = person.text.includes('premium content') ? 'USD 0.5' : bot.headers['crawler-price'];
      expect({ path, status: bot.status, price: bot.headers['crawler-price'] }).toEqual({ path, status: 402, price });
    }
    // The router really reaches priced pages through some of these spellings.
    expect(reached).toBeGreaterThan(2);
  });

  it('charges a HEAD of a priced spelling too (404 where the router has no route for it)', async () => {
    for (const path of ['/ROBOTS.TXT', '/llms.txt;x', '/.well-known/../premium/a']) {
      const head = await send(server, path, { 'user-agent': GPTBOT }, 'HEAD');
      expect({ path, head: [402, 404].includes(head.status) }).toEqual({ path, head: true });
    }
  });

  it('never charges a bot for the free paths themselves, nor for the license document', async () => {
    const free = [
      '/robots.txt',
      '/llms.txt',
      '/sitemap.xml',
      '/security.txt',
      '/.well-known/security.txt',
      '/robots.txt?ref=/premium/a',
    ];
    for (const path of free) {
      const bot = await send(server, path, { 'user-agent': GPTBOT });
      expect({ path, status: bot.status }).toEqual({ path, status: bot.status === 404 ? 404 : 200 });
      expect({ path, priced: bot.headers['crawler-price'] }).toEqual({ path, priced: undefined });
    }
    // Not built on NestJS (see adapters/nest.ts): there the document is off.
    if (framework.name.startsWith('NestJS')) return;
    const license = await send(server, '/license.xml', { 'user-agent': GPTBOT });
    expect(license.status).toBe(200);
    expect(license.headers['content-type']).toMatch(/^application\/rsl\+xml/);
    expect(license.text).toContain('<payment type="crawl">');
  });

  it('links the license from every 402', async () => {
    if (framework.name.startsWith('NestJS')) return;
    const answer = await send(server, '/premium/linked', { 'user-agent': GPTBOT });
    expect(answer.status).toBe(402);
    expect(answer.headers.link).toBe(
      `<https://${site.site.domain}/license.xml>; rel="license"; type="application/rsl+xml"`,
    );
  });
});
