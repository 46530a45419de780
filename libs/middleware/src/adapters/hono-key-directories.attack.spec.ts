/*
 * A signed request names the host of its key directory (Signature-Agent), and the gate fetches it
 * before the signature is checked. A public name can resolve to an address inside the site's own
 * network: on Node the gate must not connect there. Express, Fastify and NestJS resolve and check
 * the name (nodeKeyDirectoryFetch); Hono on @hono/node-server, whose entry stays edge-safe, fetches
 * no directory unless given a fetch. Here the machine's own host name stands in for such a name.
 */
import { serve } from '@hono/node-server';
import { generateEd25519Jwk } from '@crawlgate/core';
import { Hono } from 'hono';
import { lookup } from 'node:dns/promises';
import { request as httpRequest, type Server } from 'node:http';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { hostname } from 'node:os';
import { FAKE_API_URL, FAKE_SITE_ID, fakeApi } from '../../testing/fake-api';
import { handSigned } from '../../testing/signing';
import type { CrawlgateOptions } from '../crawlgate';
import { crawlgateHono } from './hono';

const INSIDE = hostname();

describe('Hono: key directories named by a signed request', () => {
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

  it('off Node (Workers, Bun, Deno: the app given a Request), fetches with the runtime’s fetch as before', async () => {
    const answer = await app().request('https://example.com/post/1', { headers: await signedHeaders() });
    expect(answer.status).toBe(402);
    // No name can be checked there (the README says so): the connection is the runtime's to make.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(connections.length).toBeGreaterThan(0);
  }, 30_000);
});
