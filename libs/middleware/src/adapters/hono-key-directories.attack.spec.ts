/*
 * A signed request names the host of its key directory (Signature-Agent), and the gate fetches it
 * before the signature is checked. A public name can resolve to an address inside the site's own
 * network: on Node the gate must not connect there. Express, Fastify and NestJS resolve and check
 * the name (nodeKeyDirectoryFetch); Hono, whose entry stays edge-safe, fetches no directory unless
 * given a fetch, but on an edge runtime whose fetch cannot reach the site's network (Cloudflare
 * Workers). Here the machine's own host name stands in for such a name.
 */
import { serve } from '@hono/node-server';
import { generateEd25519Jwk } from '@crawlgate/core';
import { Hono } from 'hono';
import { handle } from 'hono/vercel';
import { lookup } from 'node:dns/promises';
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { hostname } from 'node:os';
import { FAKE_API_URL, FAKE_SITE_ID, fakeApi } from '../../testing/fake-api';
import { handSigned } from '../../testing/signing';
import type { CrawlgateOptions } from '../crawlgate';
import { crawlgateFetch } from './fetch';
import { crawlgateHono } from './hono';

const INSIDE = hostname();

/** What a Request-based Node host does: the Node message as a web Request. */
function webRequestOf(message: IncomingMessage): Request {
  const headers = new Headers();
  for (let i = 0; i + 1 < message.rawHeaders.length; i += 2)
    headers.append(message.rawHeaders[i], message.rawHeaders[i + 1]);
  return new Request(`http://${message.headers.host}${message.url}`, { method: message.method, headers });
}

describe('Hono and the Request adapter: key directories named by a signed request', () => {
  let inside: ReturnType<typeof createServer>;
  let port: number;
  const connections: Socket[] = [];
  const warnings: string[] = [];
  beforeAll(async () => {
    await lookup(INSIDE); // the name resolves to this machine: a connection would reach the service below
    inside = createServer((socket) => {
      connections.push(socket);
      socket.destroy();
    });
    await new Promise<void>((resolve) => inside.listen(0, '0.0.0.0', resolve));
    port = (inside.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => inside.close(() => resolve())));
  beforeEach(() => {
    connections.length = 0;
    warnings.length = 0;
  });

  const options = (): CrawlgateOptions => ({
    apiUrl: FAKE_API_URL,
    siteId: FAKE_SITE_ID,
    siteToken: 'st_site_token',
    secret: 'secret-of-the-site',
    fetch: fakeApi().fetch,
    crawlerIps: false,
    // Pinned, so its port (not 443) is no reason to refuse it: what stops the connection here is each runtime's fetch.
    webBotAuth: { knownSigners: [`https://${INSIDE}:${port}`] },
    logger: { warn: (message: string) => void warnings.push(message) },
  });
  const app = () => {
    const hono = new Hono();
    hono.use('*', crawlgateHono(options()));
    hono.get('/post/:id', (c) => c.text('post'));
    return hono;
  };
  const signedHeaders = async () => ({
    host: 'example.com',
    'user-agent': 'curl/8',
    ...(await handSigned({
      key: await generateEd25519Jwk(),
      agent: `https://${INSIDE}:${port}`,
      url: 'https://example.com/post/1',
    })),
  });

  it('on @hono/node-server: fetches none without a fetch given, charges the request, and says once how to verify', async () => {
    const server = serve({ fetch: app().fetch, port: 0, hostname: '127.0.0.1' }) as Server;
    if (!server.listening) await new Promise((resolve) => server.once('listening', resolve));
    const get = async () => {
      const headers = await signedHeaders();
      return new Promise<number>((resolve, reject) => {
        const port = (server.address() as AddressInfo).port;
        const sent = httpRequest({ host: '127.0.0.1', port, path: '/post/1', headers }, (answer) => {
          answer.resume();
          resolve(answer.statusCode ?? 0);
        });
        sent.on('error', reject);
        sent.end();
      });
    };
    try {
      expect([await get(), await get()]).toEqual([402, 402]);
      expect(connections.length).toBe(0);
      expect(warnings.filter((warning) => warning.includes('nodeKeyDirectoryFetch'))).toHaveLength(1);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }, 30_000);

  it('on Cloudflare Workers, whose fetch cannot reach the site’s network, fetches with the runtime’s fetch', async () => {
    // Workers as its code sees it: navigator.userAgent names it.
    const navigator = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
    Object.defineProperty(globalThis, 'navigator', { value: { userAgent: 'Cloudflare-Workers' }, configurable: true });
    try {
      const answer = await app().request('https://example.com/post/1', { headers: await signedHeaders() });
      expect(answer.status).toBe(402);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(connections.length).toBeGreaterThan(0);
    } finally {
      if (navigator) Object.defineProperty(globalThis, 'navigator', navigator);
      else delete (globalThis as { navigator?: unknown }).navigator;
    }
  }, 30_000);

  it('given a Request on any other runtime (Bun, Deno, Node behind a Request-based host), fetches none without a fetch given', async () => {
    const answer = await app().request('https://example.com/post/1', { headers: await signedHeaders() });
    expect(answer.status).toBe(402);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(connections.length).toBe(0);
    expect(warnings.filter((warning) => warning.includes('webBotAuth'))).toHaveLength(1);
  }, 30_000);

  async function through(handler: (request: Request) => Promise<Response>): Promise<number> {
    const server = createHttpServer((message, response) => {
      void handler(webRequestOf(message)).then(async (answer) => {
        response.writeHead(answer.status, Object.fromEntries(answer.headers));
        response.end(Buffer.from(await answer.arrayBuffer()));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const headers = await signedHeaders();
      const status = await new Promise<number>((resolve, reject) => {
        const sent = httpRequest(
          { host: '127.0.0.1', port: (server.address() as AddressInfo).port, path: '/post/1', headers },
          (answer) => {
            answer.resume();
            resolve(answer.statusCode ?? 0);
          },
        );
        sent.on('error', reject);
        sent.end();
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      return status;
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  it('Hono through hono/vercel handle() on Node: no connection into the site’s network', async () => {
    const app = new Hono();
    const gate = crawlgateHono(options());
    app.use('*', gate);
    app.get('/post/:id', (c) => c.text('post'));
    try {
      expect(await through(async (request) => handle(app)(request))).toBe(402);
      expect(connections.length).toBe(0);
    } finally {
      await gate.close();
    }
  }, 30_000);

  it('crawlgateFetch on Node (Next.js middleware under next start): no connection into the site’s network', async () => {
    const gate = crawlgateFetch(options());
    try {
      const status = await through(async (request) => {
        const { response } = await gate(request);
        return response ?? new Response('post');
      });
      expect(status).toBe(402);
      expect(connections.length).toBe(0);
    } finally {
      await gate.close();
    }
  }, 30_000);
});
