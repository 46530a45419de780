/*
 * A target starting with "//" is a path to the gate ("//free/x" is "/free/x") and, to an app that
 * reads its path the way Node's documentation shows (`new URL(req.url, base)`), a host "free" and
 * the path "/x". Such a target must be neither free nor opened by a token: it is priced at the
 * site's highest price. Real Express and Fastify servers whose pages read their path that way, the
 * real API. Pricing: /premium-article and everything else 0.01 (default), /cheap/* and /blog/cheap/*
 * 0.001, /free/* and /blog/free/* 0. A router mounted at /blog sees "/blog//free/x" as "//free/x".
 */

import { crawlgateExpress } from '@crawlgate/middleware/express';
import { crawlgateFastify } from '@crawlgate/middleware/fastify';
import type { CrawlgateOptions } from '@crawlgate/middleware';
import express from 'express';
import Fastify from 'fastify';
import type { AddressInfo } from 'node:net';
import { BROWSER, GPTBOT, startGatedSite, type GatedSite } from './support/gated-site';
import { rawRequest, type Answer } from './support/raw-request';
import type { SiteServer } from './support/site-servers';

/** A page that says which path the app read. */
const page = (url: string) => `content of ${new URL(url, 'http://site.example').pathname}`;

const APPS: { name: string; start(options: CrawlgateOptions): Promise<SiteServer> }[] = [
  {
    name: 'Express',
    async start(options) {
      const app = express();
      app.use(crawlgateExpress(options));
      app.use((req, res) => void res.type('text/html').send(page(req.url)));
      const server = app.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      return {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        close: () => new Promise<void>((resolve) => server.close(() => resolve())),
      };
    },
  },
  {
    name: 'Fastify',
    async start(options) {
      const app = Fastify();
      await app.register(crawlgateFastify, options);
      app.get('/*', async (req, reply) => reply.type('text/html').send(page(req.url)));
      await app.listen({ port: 0, host: '127.0.0.1' });
      return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, close: () => app.close() };
    },
  },
];

let site: GatedSite;
beforeAll(async () => {
  site = await startGatedSite();
  await site.setPricing({
    default_price_usd: '0.01',
    rules: [
      { path: '/cheap/*', price_usd: '0.001' },
      { path: '/free/*', price_usd: '0' },
      { path: '/blog/cheap/*', price_usd: '0.001' },
      { path: '/blog/free/*', price_usd: '0' },
    ],
  });
}, 60_000);
afterAll(() => site?.close());

const json = (answer: Answer) => JSON.parse(answer.text) as Record<string, any>;

describe.each(APPS)('$name, pages reading new URL(req.url, base)', (app) => {
  let server: SiteServer;
  beforeAll(async () => {
    server = await app.start(site.options());
  });
  afterAll(() => server?.close());

  it('charges "//free/…" and "//robots.txt": to the app another page, no free one', async () => {
    // The app serves these as the paid pages "/premium-article" and "/" (a person sees them).
    for (const [target, readAs] of [
      ['//free/premium-article', '/premium-article'],
      ['//robots.txt', '/'],
      ['//sitemap.xml', '/'],
      ['//llms.txt', '/'],
      ['//.well-known/premium-article', '/premium-article'],
      ['//robots.txt?page=2', '/'],
    ]) {
      expect({ target, person: (await rawRequest(server, target, { 'user-agent': BROWSER })).text }).toEqual({
        target,
        person: `content of ${readAs}`,
      });
      const bot = await rawRequest(server, target, { 'user-agent': GPTBOT });
      expect({ target, status: bot.status, content: bot.text.includes('content') }).toEqual({
        target,
        status: 402,
        content: false,
      });
    }
    // The free paths as written stay free.
    for (const target of ['/free/premium-article', '/robots.txt'])
      expect({ target, status: (await rawRequest(server, target, { 'user-agent': GPTBOT })).status }).toEqual({
        target,
        status: 200,
      });
  });

  it('never opens "//cheap/…" with the token bought for "/cheap/…"', async () => {
    const paid = `/cheap/premium-${app.name.toLowerCase()}`;
    const token = await site.payThroughApi(json(await rawRequest(server, paid, { 'user-agent': GPTBOT })) as never);
    const withToken = { 'user-agent': GPTBOT, 'x-crawlgate-token': token };
    expect((await rawRequest(server, paid, withToken)).text).toBe(`content of ${paid}`);
    const answer = await rawRequest(server, `/${paid}`, withToken);
    expect({ status: answer.status, content: answer.text.includes('content') }).toEqual({
      status: 402,
      content: false,
    });
  });
});

describe('Express, pages in a router mounted at /blog reading new URL(req.url, base)', () => {
  let server: SiteServer;
  beforeAll(async () => {
    const app = express();
    app.use(crawlgateExpress(site.options()));
    const blog = express.Router();
    blog.use((req, res) => void res.type('text/html').send(page(req.url)));
    app.use('/blog', blog);
    const listening = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => listening.once('listening', resolve));
    server = {
      url: `http://127.0.0.1:${(listening.address() as AddressInfo).port}`,
      close: () => new Promise<void>((resolve) => listening.close(() => resolve())),
    };
  });
  afterAll(() => server?.close());

  it('charges "/blog//free/…": to the router, the page "/premium-article"', async () => {
    const target = '/blog//free/premium-article';
    expect((await rawRequest(server, target, { 'user-agent': BROWSER })).text).toBe('content of /premium-article');
    const bot = await rawRequest(server, target, { 'user-agent': GPTBOT });
    expect({ status: bot.status, content: bot.text.includes('content') }).toEqual({ status: 402, content: false });
    expect((await rawRequest(server, '/blog/free/premium-article', { 'user-agent': GPTBOT })).status).toBe(200);
  });

  it('never opens "/blog//cheap/…" with the token bought for "/blog/cheap/…"', async () => {
    const paid = '/blog/cheap/premium-article';
    const token = await site.payThroughApi(json(await rawRequest(server, paid, { 'user-agent': GPTBOT })) as never);
    const withToken = { 'user-agent': GPTBOT, 'x-crawlgate-token': token };
    expect((await rawRequest(server, paid, withToken)).text).toBe('content of /cheap/premium-article');
    const answer = await rawRequest(server, '/blog//cheap/premium-article', withToken);
    expect({ status: answer.status, content: answer.text.includes('content') }).toEqual({
      status: 402,
      content: false,
    });
  });
});
