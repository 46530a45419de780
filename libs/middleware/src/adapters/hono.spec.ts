import { serve } from '@hono/node-server';
import { signAccessToken } from '@crawlgate/core';
import { Hono } from 'hono';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FAKE_API_URL, FAKE_SITE_ID, fakeApi, fakePaymentV1, paid } from '../../testing/fake-api';
import { crawlgateHono, type CrawlgateHonoMiddleware } from './hono';

const SECRET = 'secret-of-the-site';
const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)';
const BROWSER =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';

function token(url: string) {
  const now = Math.floor(Date.now() / 1000);
  return signAccessToken(
    { gate_id: 'gate-1', site_id: FAKE_SITE_ID, url, kid: 'k1', iat: now, exp: now + 1800 },
    SECRET,
  );
}

/** The token the fake API pays /post/1 with: made once, so a second boundary between its signing and a test's expectation changes nothing. */
const PAID_TOKEN = token('/post/1');

/** A Hono site behind the adapter: /post/:id is priced, the fake API pays for /post/1. */
function site() {
  const fake = fakeApi({ verify: (gateId) => paid(gateId, PAID_TOKEN, '/post/1') });
  const middleware = crawlgateHono({
    apiUrl: FAKE_API_URL,
    siteId: FAKE_SITE_ID,
    siteToken: 'st_site_token',
    secret: SECRET,
    fetch: fake.fetch,
    routing: { caseSensitive: true, strictTrailingSlash: true },
    crawlerIps: false, // no fetch of the operators' IP ranges from a unit test
  });
  const app = new Hono();
  app.use('*', middleware);
  app.get('/post/:id', (c) => {
    // Answers whose headers are immutable: a proxied fetch() (of a data: URL here), a redirect.
    if (c.req.query('as') === 'proxied') return fetch('data:text/plain,proxied');
    if (c.req.query('as') === 'redirect') return Response.redirect('https://elsewhere.test/post/1', 302);
    return c.text(`post ${c.req.param('id')}`);
  });
  return { app, middleware };
}

type Get = (path: string, headers: Record<string, string>) => Promise<Response>;

/** The same app reached as Workers, Bun and Deno reach it (a web Request, no Node message) and over @hono/node-server. */
const TRANSPORTS: { name: string; start(app: Hono): Promise<{ get: Get; close(): Promise<void> }> }[] = [
  {
    name: 'a web Request (Workers, Bun, Deno)',
    async start(app) {
      return { get: async (path, headers) => app.request(path, { headers }), close: async () => undefined };
    },
  },
  {
    name: '@hono/node-server on loopback',
    async start(app) {
      const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
      if (!server.listening) await new Promise((resolve) => server.once('listening', resolve));
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      return {
        get: (path, headers) => fetch(base + path, { headers, redirect: 'manual' }),
        close: () => new Promise<void>((resolve) => server.close(() => resolve())),
      };
    },
  },
];

describe.each(TRANSPORTS)('crawlgateHono through $name', (transport) => {
  let middleware: CrawlgateHonoMiddleware;
  let get: Get;
  let close: () => Promise<void>;

  beforeEach(async () => {
    const built = site();
    middleware = built.middleware;
    ({ get, close } = await transport.start(built.app));
  });
  afterEach(async () => {
    await close();
    await middleware.close();
  });

  it('lets a person through and answers an unpaid bot 402 with the x402 offer', async () => {
    const person = await get('/post/1', { 'user-agent': BROWSER });
    expect([person.status, await person.text()]).toEqual([200, 'post 1']);
    const bot = await get('/post/1', { 'user-agent': GPTBOT });
    expect(bot.status).toBe(402);
    expect(bot.headers.get('payment-required')).toBeTruthy();
    expect(await bot.text()).not.toContain('post 1');
  });

  it('serves a token only for its own path', async () => {
    const own = await get('/post/1', { 'user-agent': GPTBOT, 'x-crawlgate-token': token('/post/1') });
    expect([own.status, await own.text()]).toEqual([200, 'post 1']);
    // Hono's strict router sends the last two to no route; the gate, before routing, charges them anyway.
    for (const path of ['/post/2', '/post/1/', '/POST/1']) {
      const other = await get(path, { 'user-agent': GPTBOT, 'x-crawlgate-token': token('/post/1') });
      expect({ path, status: other.status }).toEqual({ path, status: 402 });
    }
  });

  it('serves a payment the API confirmed, with its token in the page’s headers', async () => {
    const response = await get('/post/1', { 'user-agent': GPTBOT, 'x-payment': fakePaymentV1() });
    expect([response.status, await response.text()]).toEqual([200, 'post 1']);
    expect(response.headers.get('x-crawlgate-token')).toBe(PAID_TOKEN);
  });

  it('hands a payer its token and page when the route answers with immutable headers (a proxied fetch, a redirect)', async () => {
    const proxied = await get('/post/1?as=proxied', { 'user-agent': GPTBOT, 'x-payment': fakePaymentV1() });
    expect([proxied.status, await proxied.text()]).toEqual([200, 'proxied']);
    expect(proxied.headers.get('x-crawlgate-token')).toBe(PAID_TOKEN);
    const moved = await get('/post/1?as=redirect', { 'user-agent': GPTBOT, 'x-payment': fakePaymentV1() });
    expect([moved.status, moved.headers.get('location')]).toEqual([302, 'https://elsewhere.test/post/1']);
    expect(moved.headers.get('x-crawlgate-token')).toBe(PAID_TOKEN);
  });
});

describe('crawlgateHono: where it reads the headers', () => {
  const BINDINGS_ONLY = { incoming: { name: 'a KV namespace that happens to be called incoming' } };

  it('reads Node’s own message on @hono/node-server, not a web Headers built from it', async () => {
    const { app, middleware } = site();
    try {
      // The message is what the client sent; a Request claiming otherwise is not what is read.
      const incoming = { headers: { 'user-agent': BROWSER }, rawHeaders: ['User-Agent', BROWSER], socket: {} };
      const response = await app.fetch(new Request('http://site.test/post/1', { headers: { 'user-agent': GPTBOT } }), {
        incoming,
      });
      expect(response.status).toBe(200);
    } finally {
      await middleware.close();
    }
  });

  it('reads the web Request when `incoming` is not a Node message (a binding of that name)', async () => {
    const { app, middleware } = site();
    try {
      const request = new Request('http://site.test/post/1', { headers: { 'user-agent': GPTBOT } });
      expect((await app.fetch(request, BINDINGS_ONLY)).status).toBe(402);
    } finally {
      await middleware.close();
    }
  });
});
