/*
 * One scenario table, run against every adapter: a real site server per framework, gated against
 * the real API and the local chain.
 */

import { Controller, Get, Module, Param } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { decodeBase64Json } from '@crawlgate/core';
import { CrawlgateModule } from '@crawlgate/middleware/nest';
import {
  AHREFSBOT,
  BROWSER,
  CLAUDEBOT,
  deadApiUrl,
  GPTBOT,
  startGatedSite,
  type GatedSite,
} from './support/gated-site';
import { CDN_CACHING, FRAMEWORKS, listenNest, page, type SiteServer } from './support/site-servers';

let site: GatedSite;
beforeAll(async () => {
  site = await startGatedSite();
}, 60_000);
afterAll(() => site?.close());

async function get(server: SiteServer, path: string, headers: Record<string, string>) {
  const response = await fetch(server.url + path, { headers });
  const text = await response.text();
  const json = response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined;
  return { status: response.status, headers: response.headers, text, json };
}

describe.each(FRAMEWORKS)('$name adapter', (framework) => {
  let server: SiteServer;
  const path = (name: string) => `/articles/${name}-${framework.name.replace(/\W+/g, '-')}`;
  beforeAll(async () => {
    server = await framework.start(site.options({ policy: { categories: { seo: 'block' } } }));
  });
  afterAll(() => server?.close());

  it('serves a person’s browser', async () => {
    const answer = await get(server, '/articles/1', { 'user-agent': BROWSER });
    expect(answer.status).toBe(200);
    expect(answer.text).toBe(page('1'));
    expect(answer.headers.get('crawler-price')).toBeNull();
  });

  it('answers an AI crawler 402 with the gate, PAYMENT-REQUIRED, crawler-price and no-store', async () => {
    const answer = await get(server, path('priced'), { 'user-agent': GPTBOT });
    expect(answer.status).toBe(402);
    expect(answer.json).toMatchObject({
      url: path('priced'),
      price_usd: '0.01',
      amount: '10000',
      x402Version: 1,
      accepts: [{ maxAmountRequired: '10000' }],
    });
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.headers.get('crawler-price')).toBe('USD 0.01');
    expect(decodeBase64Json(answer.headers.get('payment-required')!)).toMatchObject({
      x402Version: 2,
      accepts: [{ amount: '10000' }],
    });
  });

  it('keeps a paid answer no-store when the route sends its own Cache-Control (a site behind a CDN)', async () => {
    // A shared cache storing it would hand the page and the payer's token to the next bot.
    const cached = `/cached/x-payment-${framework.name.replace(/\W+/g, '-')}`;
    const offer = await get(server, cached, { 'user-agent': GPTBOT });
    expect(offer.status).toBe(402);
    const paid = await get(server, cached, { 'user-agent': GPTBOT, 'x-payment': await site.xPayment(offer.json) });
    expect(paid.status).toBe(200);
    expect(paid.text).toBe(page(cached.split('/')[2]));
    expect(paid.headers.get('x-crawlgate-token')).toBeTruthy();
    // Cache-Control, and the headers CDNs read instead of it (Cloudflare, Fastly, nginx, Vercel, Netlify, Akamai).
    expect(paid.headers.get('cache-control')).toBe('no-store');
    expect(paid.headers.get('cdn-cache-control')).toBe('no-store');
    expect(paid.headers.get('cloudflare-cdn-cache-control')).toBe('no-store');
    expect(paid.headers.get('surrogate-control')).toBe('no-store');
    expect(paid.headers.get('x-accel-expires')).toBe('0');
    expect(paid.headers.get('vercel-cdn-cache-control')).toBe('no-store');
    expect(paid.headers.get('netlify-cdn-cache-control')).toBe('no-store');
    expect(paid.headers.get('edge-control')).toBe('no-store');
    // The route's own headers where the gate has none to keep: a person's page.
    const person = await get(server, '/cached/1', { 'user-agent': BROWSER });
    for (const [name, value] of Object.entries(CDN_CACHING)) expect(person.headers.get(name)).toBe(value);
  });

  it('serves a crawler that paid through the API and shows its token, on the paid path only', async () => {
    const offer = await get(server, path('paid'), { 'user-agent': CLAUDEBOT });
    const token = await site.payThroughApi(offer.json);
    const paid = await get(server, path('paid'), { 'user-agent': CLAUDEBOT, authorization: `Bearer ${token}` });
    expect(paid.status).toBe(200);
    expect(paid.text).toBe(page(path('paid').split('/')[2]));
    expect(
      (await get(server, path('other'), { 'user-agent': CLAUDEBOT, authorization: `Bearer ${token}` })).status,
    ).toBe(402);
  });

  it('settles an X-PAYMENT and adds the settlement headers to the page', async () => {
    const offer = await get(server, path('x-payment'), { 'user-agent': GPTBOT });
    const paid = await get(server, path('x-payment'), {
      'user-agent': GPTBOT,
      'x-payment': await site.xPayment(offer.json),
    });
    expect(paid.status).toBe(200);
    expect(paid.text).toBe(page(path('x-payment').split('/')[2]));
    expect(decodeBase64Json(paid.headers.get('x-payment-response')!)).toEqual({
      success: true,
      transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      network: offer.json.accepts[0].network,
      payer: site.agent.address.toLowerCase(),
    });
    expect(paid.headers.get('crawler-charged')).toBe('USD 0.01');
    expect(paid.headers.get('cache-control')).toBe('no-store');
    const again = await get(server, path('x-payment'), {
      'user-agent': GPTBOT,
      'x-crawlgate-token': paid.headers.get('x-crawlgate-token')!,
    });
    expect(again.status).toBe(200);
  });

  it('blocks a bot the policy blocks with 403', async () => {
    const answer = await get(server, '/articles/1', { 'user-agent': AHREFSBOT });
    expect(answer.status).toBe(403);
    expect(answer.json).toEqual({ detail: expect.stringContaining('AhrefsBot') });
  });

  it('lets robots.txt through for every bot', async () => {
    const answer = await get(server, '/robots.txt', { 'user-agent': GPTBOT });
    expect(answer.status).toBe(200);
    expect(answer.text).toMatch(/^User-agent: \*/);
  });

  it('publishes /.well-known/pay.json', async () => {
    const answer = await get(server, '/.well-known/pay.json', { 'user-agent': BROWSER });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({
      version: 1,
      site: { id: site.site.siteId, domain: site.site.domain },
      default_price_usd: '0.01',
      api: site.app.baseUrl,
    });
  });

  it('serves with failMode open and answers 503 with failMode closed when the API is down', async () => {
    const apiUrl = await deadApiUrl();
    const open = await framework.start(site.options({ apiUrl, failMode: 'open' }));
    const closed = await framework.start(site.options({ apiUrl, failMode: 'closed' }));
    try {
      const served = await get(open, '/articles/1', { 'user-agent': GPTBOT });
      expect(served.status).toBe(200);
      expect(served.text).toBe(page('1'));
      const refused = await get(closed, '/articles/1', { 'user-agent': GPTBOT });
      expect(refused.status).toBe(503);
      expect(refused.json.detail).toMatch(/unavailable/);
      expect(site.warnings.join('\n')).toMatch(/GET \/v1\/site: unreachable \(ECONNREFUSED\)/);
      expect(site.warnings.slice(-2)).toEqual([
        expect.stringMatching(/never loaded; failMode open: serving/),
        expect.stringMatching(/never loaded; failMode closed: answering 503/),
      ]);
    } finally {
      await Promise.all([open.close(), closed.close()]);
    }
  });
});

describe('NestJS on Fastify with rewriteUrl', () => {
  let server: SiteServer;
  beforeAll(async () => {
    await site.setPricing({ default_price_usd: '0.01', rules: [{ path: '/articles/*', price_usd: '0.5' }] });
    @Controller()
    class PagesController {
      @Get('articles/:id') article(@Param('id') id: string) {
        return page(id);
      }
    }
    @Module({ imports: [CrawlgateModule.forRoot(site.options())], controllers: [PagesController] })
    class RewritingSite {}
    // The site serves /old/<id> as /articles/<id>: Fastify rewrites the URL before routing.
    const adapter = new FastifyAdapter({
      rewriteUrl: (request: { url?: string }) => (request.url ?? '/').replace(/^\/old\//, '/articles/'),
    });
    server = await listenNest(await NestFactory.create(RewritingSite, adapter, { logger: false }));
  });
  afterAll(() => server?.close());

  it('prices the URL the router serves, not the one before the rewrite', async () => {
    const answer = await get(server, '/old/rewritten', { 'user-agent': GPTBOT });
    expect({ status: answer.status, price: answer.headers.get('crawler-price') }).toEqual({
      status: 402,
      price: 'USD 0.5',
    });
  });
});
