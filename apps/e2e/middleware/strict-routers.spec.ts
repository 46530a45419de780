/*
 * Routers strict about trailing slashes still serve some routes both ways: a Fastify prefix's "/"
 * route (prefixTrailingSlash "both", its default), Hono's "/premium/*" (which matches /premium), an
 * Express router's mount root. Gated with `routing: { caseSensitive: true, strictTrailingSlash: true }`,
 * as the README asks of strict routers, the spelling without the slash is priced as the route it
 * reaches. Real servers, the real API and the local chain. Pricing: /premium/* 0.1, the rest free.
 */

import { serve } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { crawlgateExpress } from '@crawlgate/middleware/express';
import { crawlgateFastify } from '@crawlgate/middleware/fastify';
import { crawlgateHono } from '@crawlgate/middleware/hono';
import { GPTBOT, startGatedSite, type GatedSite } from './support/gated-site';
import { rawRequest } from './support/raw-request';
import { listening, type SiteServer } from './support/site-servers';

const STRICT = { caseSensitive: true, strictTrailingSlash: true };
const PREMIUM = '<p>premium index</p>';

let site: GatedSite;
const servers: SiteServer[] = [];
beforeAll(async () => {
  site = await startGatedSite();
  await site.setPricing({ default_price_usd: '0', rules: [{ path: '/premium/*', price_usd: '0.1' }] });
}, 60_000);
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await site?.close();
}, 60_000);

async function kept(server: SiteServer | Promise<SiteServer>): Promise<SiteServer> {
  const started = await server;
  servers.push(started);
  return started;
}

const sites: [string, () => Promise<SiteServer>][] = [
  [
    'Fastify, a prefix plugin with a "/" route',
    async () => {
      const app = Fastify();
      await app.register(crawlgateFastify, site.options({ routing: STRICT }));
      await app.register(
        async (premium) => premium.get('/', async (_req, reply) => reply.type('text/html').send(PREMIUM)),
        {
          prefix: '/premium',
        },
      );
      await app.listen({ port: 0, host: '127.0.0.1' });
      return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, close: () => app.close() };
    },
  ],
  [
    'Hono, a "/premium/*" route',
    async () => {
      const app = new Hono();
      app.use('*', crawlgateHono(site.options({ routing: STRICT })));
      app.get('/premium/*', (c) => c.html(PREMIUM));
      return listening(serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server);
    },
  ],
  [
    'Express, a strict router mounted at /premium',
    async () => {
      const app = express();
      app.set('strict routing', true);
      app.use(crawlgateExpress(site.options({ routing: STRICT })));
      const router = express.Router({ strict: true, caseSensitive: true });
      router.get('/', (_req, res) => void res.type('text/html').send(PREMIUM));
      app.use('/premium', router);
      return listening(app.listen(0, '127.0.0.1'));
    },
  ],
  [
    'Express, the gate mounted with the router at /premium',
    async () => {
      const app = express();
      const router = express.Router({ strict: true, caseSensitive: true });
      router.get('/', (_req, res) => void res.type('text/html').send(PREMIUM));
      app.use('/premium', crawlgateExpress(site.options({ routing: STRICT })), router);
      return listening(app.listen(0, '127.0.0.1'));
    },
  ],
];

describe.each(sites)('%s', (_name, start) => {
  let server: SiteServer;
  beforeAll(async () => {
    server = await kept(start());
  });

  it.each(['/premium', '/premium/'])('charges an unpaid bot the route’s price for %s', async (path) => {
    const bot = await rawRequest(server, path, { 'user-agent': GPTBOT });
    expect({ path, status: bot.status, price: bot.headers['crawler-price'] }).toEqual({
      path,
      status: 402,
      price: 'USD 0.1',
    });
    expect(bot.text).not.toContain(PREMIUM);
  });

  it('serves /premium to a bot holding its paid token', async () => {
    const offer = JSON.parse((await rawRequest(server, '/premium', { 'user-agent': GPTBOT })).text);
    const token = await site.payThroughApi(offer);
    const paid = await rawRequest(server, '/premium', { 'user-agent': GPTBOT, 'x-crawlgate-token': token });
    expect([paid.status, paid.text]).toEqual([200, PREMIUM]);
  });
});
