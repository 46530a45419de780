/*
 * crawlgateHono where Hono is not the whole server: an app mounted in Express through
 * @hono/node-server's request listener (Express cuts the mount path off the URL Hono sees), and
 * an app whose own middleware, registered before the gate, sets caching headers on every answer.
 * Real Express and node-server, the real API and the local chain. Pricing: /premium/* 0.5, else 0.001.
 */

import { getRequestListener, serve } from '@hono/node-server';
import express from 'express';
import { Hono } from 'hono';
import type { Server } from 'node:http';
import type { CrawlgateOptions } from '@crawlgate/middleware';
import { crawlgateExpress } from '@crawlgate/middleware/express';
import { crawlgateHono } from '@crawlgate/middleware/hono';
import { BROWSER, GPTBOT, startGatedSite, type GatedSite } from './support/gated-site';
import { rawRequest } from './support/raw-request';
import { CDN_CACHING, listening, type SiteServer } from './support/site-servers';

let site: GatedSite;
const servers: SiteServer[] = [];
beforeAll(async () => {
  site = await startGatedSite();
  await site.setPricing({ default_price_usd: '0.001', rules: [{ path: '/premium/*', price_usd: '0.5' }] });
}, 60_000);
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await site?.close();
}, 60_000);

const premium = (path: string) => `<p>premium content ${path}</p>`;

async function start(server: Server): Promise<SiteServer> {
  const started = await listening(server);
  servers.push(started);
  return started;
}

describe('crawlgateHono inside another server', () => {
  /** A Hono app gated inside, mounted by Express under /premium; `routing` as the README advises for Hono. */
  async function honoInExpress(routing?: CrawlgateOptions['routing']): Promise<SiteServer> {
    const inner = new Hono();
    inner.use('*', crawlgateHono({ ...site.options(), routing }));
    inner.get('*', (c) => c.html(premium(c.req.path)));
    const app = express();
    app.use('/premium', getRequestListener(inner.fetch));
    return start(app.listen(0, '127.0.0.1'));
  }

  it('prices the path the client asked for when Express mounts the Hono app under a prefix', async () => {
    // Express hands the listener `req.url` without /premium: priced so, the page went for 0.001.
    const server = await honoInExpress();
    expect((await rawRequest(server, '/premium/1', { 'user-agent': BROWSER })).text).toBe(premium('/1'));
    const bot = await rawRequest(server, '/premium/1', { 'user-agent': GPTBOT });
    expect({ status: bot.status, price: bot.headers['crawler-price'] }).toEqual({ status: 402, price: 'USD 0.5' });
    expect(bot.text).not.toContain('premium content');
    // The gate offered, and its token will be bound to, the path the client asked for.
    expect(JSON.parse(bot.text).url).toBe('/premium/1');
  });

  it('prices a spelling the mount takes as the same route at the premium price, whatever Hono routing is declared', async () => {
    // Express matches its mount path whatever the case: /PREMIUM/1 reaches the app, and the gate,
    // told Hono's routing is case-sensitive, priced it at the default price.
    const server = await honoInExpress({ caseSensitive: true, strictTrailingSlash: true });
    for (const path of ['/PREMIUM/1', '/Premium/1', '/premium/1']) {
      const bot = await rawRequest(server, path, { 'user-agent': GPTBOT });
      expect([path, bot.status, bot.headers['crawler-price']]).toEqual([path, 402, 'USD 0.5']);
    }
  });

  it('opens the page under the mount with the token bought for it, and no other', async () => {
    // Read as two paths (the client's, and the one Hono routes by), the page was paid on every fetch.
    const server = await honoInExpress();
    const offer = JSON.parse((await rawRequest(server, '/premium/2', { 'user-agent': GPTBOT })).text);
    const token = await site.payThroughApi(offer);
    const again = await rawRequest(server, '/premium/2', { 'user-agent': GPTBOT, 'x-crawlgate-token': token });
    expect([again.status, again.text]).toEqual([200, premium('/2')]);
    const other = await rawRequest(server, '/premium/3', { 'user-agent': GPTBOT, 'x-crawlgate-token': token });
    expect(other.status).toBe(402);
  });

  it.each(['Express', 'Hono mounted in Express'])(
    '%s: keeps a paid answer no-store when a middleware before the gate sets caching headers as it goes out',
    async (kind) => {
      // As on-headers does (compression, morgan, response-time use it): writeHead wrapped before the
      // gate's, its listener run after the gate set its headers, so what it set went out.
      const app = express();
      app.use((_req, res, next) => {
        const writeHead = res.writeHead;
        res.writeHead = function (this: typeof res, ...args: unknown[]) {
          this.setHeader('cache-control', 'public, max-age=601');
          this.setHeader('cdn-cache-control', 'max-age=601');
          this.removeHeader('surrogate-control');
          return (writeHead as (...a: unknown[]) => typeof res).apply(this, args);
        } as typeof res.writeHead;
        next();
      });
      if (kind === 'Express') {
        app.use(crawlgateExpress(site.options()));
        app.get('/shop/:id', (req, res) => void res.type('text/html').send(premium(`/${req.params.id}`)));
      } else {
        const inner = new Hono();
        inner.use('*', crawlgateHono(site.options()));
        inner.get('*', (c) => c.html(premium(c.req.path)));
        app.use('/shop', getRequestListener(inner.fetch));
      }
      const server = await start(app.listen(0, '127.0.0.1'));
      const offer = await rawRequest(server, '/shop/4', { 'user-agent': GPTBOT });
      const paid = await rawRequest(server, '/shop/4', {
        'user-agent': GPTBOT,
        'x-payment': await site.xPayment(JSON.parse(offer.text)),
      });
      expect([paid.status, paid.text]).toEqual([200, premium('/4')]);
      expect(paid.headers['x-crawlgate-token']).toBeTruthy();
      expect([
        paid.headers['cache-control'],
        paid.headers['cdn-cache-control'],
        paid.headers['surrogate-control'],
      ]).toEqual(['no-store', 'no-store', 'no-store']);
    },
  );

  it('keeps a paid answer no-store over the caching headers a middleware before the gate sets', async () => {
    // A shared cache storing the paid page would hand it and the payer's token to the next bot.
    const app = new Hono();
    app.use('*', async (c, next) => {
      await next();
      for (const [name, value] of Object.entries(CDN_CACHING)) c.header(name, value);
    });
    app.use('*', crawlgateHono(site.options()));
    app.get('/articles/:id', (c) => c.html(premium(c.req.param('id'))));
    const server = await start(serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server);
    const offer = await rawRequest(server, '/articles/7', { 'user-agent': GPTBOT });
    expect(offer.status).toBe(402);
    const paid = await rawRequest(server, '/articles/7', {
      'user-agent': GPTBOT,
      'x-payment': await site.xPayment(JSON.parse(offer.text)),
    });
    expect([paid.status, paid.text]).toEqual([200, premium('7')]);
    expect(paid.headers['x-crawlgate-token']).toBeTruthy();
    for (const name of Object.keys(CDN_CACHING)) expect([name, paid.headers[name]]).toEqual([name, 'no-store']);
    // A person's page keeps what the site's middleware sets.
    const person = await rawRequest(server, '/articles/7', { 'user-agent': BROWSER });
    for (const [name, value] of Object.entries(CDN_CACHING)) expect(person.headers[name]).toBe(value);
  });
});
