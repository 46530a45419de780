/*
 * URL rewrites before the gate: the router serves the rewritten URL, the client asked for another.
 * Both are priced and the highest price wins, on real Express, Fastify and Hono servers, the real API and
 * the local chain. Pricing: /premium/* 0.5, everything else 0.001.
 */

import middie from '@fastify/middie';
import { Controller, Get, Module, Param } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import express from 'express';
import Fastify from 'fastify';
import { CrawlgateModule } from '@crawlgate/middleware/nest';
import { crawlgateExpress } from '@crawlgate/middleware/express';
import { crawlgateFastify } from '@crawlgate/middleware/fastify';
import { crawlgateHono } from '@crawlgate/middleware/hono';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import type { Server } from 'node:http';
import { BROWSER, GPTBOT, startGatedSite, type GatedSite } from './support/gated-site';
import { rawRequest } from './support/raw-request';
import { listening, listenNest, type SiteServer } from './support/site-servers';

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

const premium = (id: string) => `<p>premium content ${id}</p>`;

async function expressWithLocalePrefix(): Promise<SiteServer> {
  const app = express();
  // An i18n middleware, as sites have them: /fr/premium/1 is served by /premium/:id.
  app.use((req, _res, next) => {
    req.url = req.url.replace(/^\/(?:en|fr|de)(?=\/)/, '');
    next();
  });
  app.use(crawlgateExpress(site.options()));
  app.get('/premium/:id', (req, res) => void res.type('text/html').send(premium(req.params.id)));
  app.get('/blog', (_req, res) => void res.type('text/html').send('<p>blog index</p>'));
  const server = await listening(app.listen(0, '127.0.0.1'));
  servers.push(server);
  return server;
}

/** Fastify serving /premium/<id> as /render/<id>; `withMiddie`: Express-style middleware registered first (@fastify/middie). */
async function fastifyWithRewriteUrl(withMiddie = false): Promise<SiteServer> {
  const app = Fastify({ rewriteUrl: (request) => (request.url ?? '/').replace(/^\/premium\//, '/render/') });
  if (withMiddie) {
    await app.register(middie);
    app.use((_req: unknown, _res: unknown, next: () => void) => next());
  }
  await app.register(crawlgateFastify, site.options());
  app.get('/render/:id', async (request, reply) =>
    reply.type('text/html').send(premium((request.params as { id: string }).id)),
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  const server = await listening(app.server);
  servers.push(server);
  return server;
}

/** NestJS on Fastify serving /premium/<id> as /render/<id>, with a Nest middleware (Nest runs them through @fastify/middie). */
async function nestOnFastifyWithRewriteUrl(): Promise<SiteServer> {
  @Controller()
  class RenderController {
    @Get('render/:id') render(@Param('id') id: string) {
      return premium(id);
    }
  }
  @Module({ imports: [CrawlgateModule.forRoot(site.options())], controllers: [RenderController] })
  class RewritingSite {}
  const adapter = new FastifyAdapter({
    rewriteUrl: (request: { url?: string }) => (request.url ?? '/').replace(/^\/premium\//, '/render/'),
  });
  const app = await NestFactory.create(RewritingSite, adapter, { logger: false });
  app.use((_req: unknown, _res: unknown, next: () => void) => next());
  const server = await listenNest(app);
  servers.push(server);
  return server;
}

/** A Hono app mounted under /premium, gated inside: Hono hands it the request with /premium cut off. */
async function honoMountedUnderPremium(): Promise<SiteServer> {
  const inner = new Hono();
  inner.use('*', crawlgateHono(site.options()));
  inner.get('*', (c) => c.html(premium(c.req.path)));
  const app = new Hono();
  app.mount('/premium', inner.fetch);
  const server = await listening(serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server);
  servers.push(server);
  return server;
}

describe('a rewrite before the gate', () => {
  it('Express: a locale prefix stripped before the gate does not lower the premium price', async () => {
    const server = await expressWithLocalePrefix();
    expect((await rawRequest(server, '/fr/premium/1', { 'user-agent': BROWSER })).text).toContain(premium('1'));
    for (const path of ['/fr/premium/1', '/premium/1']) {
      const bot = await rawRequest(server, path, { 'user-agent': GPTBOT });
      expect({ path, status: bot.status, price: bot.headers['crawler-price'] }).toEqual({
        path,
        status: 402,
        price: 'USD 0.5',
      });
      expect(bot.text).not.toContain('premium content');
    }
  });

  it('Fastify: a page rewriteUrl routes to a free path is priced as the path the client asked for', async () => {
    const server = await fastifyWithRewriteUrl();
    expect((await rawRequest(server, '/premium/1', { 'user-agent': BROWSER })).text).toContain(premium('1'));
    const bot = await rawRequest(server, '/premium/1', { 'user-agent': GPTBOT });
    expect({ status: bot.status, price: bot.headers['crawler-price'] }).toEqual({ status: 402, price: 'USD 0.5' });
    expect(bot.text).not.toContain('premium content');
  });

  it.each([
    [
      'Fastify with Express-style middleware (@fastify/middie) registered before the gate',
      () => fastifyWithRewriteUrl(true),
    ],
    ['NestJS on Fastify with a Nest middleware', nestOnFastifyWithRewriteUrl],
  ])('%s: a page rewriteUrl routes to a free path is priced as the path the client asked for', async (_, start) => {
    // middie sets the request's originalUrl to the rewritten URL: the gate must not read the client's from there.
    const server = await start();
    expect((await rawRequest(server, '/premium/1', { 'user-agent': BROWSER })).text).toContain(premium('1'));
    const bot = await rawRequest(server, '/premium/1', { 'user-agent': GPTBOT });
    expect({ status: bot.status, price: bot.headers['crawler-price'] }).toEqual({ status: 402, price: 'USD 0.5' });
    expect(bot.text).not.toContain('premium content');
  });

  it('Hono on node-server: a gate inside an app mounted under a prefix prices the path the client asked for', async () => {
    const server = await honoMountedUnderPremium();
    expect((await rawRequest(server, '/premium/1', { 'user-agent': BROWSER })).text).toContain('premium content');
    const bot = await rawRequest(server, '/premium/1', { 'user-agent': GPTBOT });
    expect({ status: bot.status, price: bot.headers['crawler-price'] }).toEqual({ status: 402, price: 'USD 0.5' });
    expect(bot.text).not.toContain('premium content');
  });

  it('Express: with no rewrite, a paid token still opens its page (the gate sees one reading)', async () => {
    const server = await expressWithLocalePrefix();
    const offer = JSON.parse((await rawRequest(server, '/blog', { 'user-agent': GPTBOT })).text);
    const token = await site.payThroughApi(offer);
    const again = await rawRequest(server, '/blog', { 'user-agent': GPTBOT, 'x-crawlgate-token': token });
    expect([again.status, again.text]).toEqual([200, '<p>blog index</p>']);
  });
});
