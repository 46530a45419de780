/*
 * A paid answer over HTTP/2 stays no-store whatever a hook before the gate passes to writeHead:
 * Node's Http2ServerResponse applies writeHead's headers through an internal setter, not the
 * response's setHeader, so only the stream's own respond() sees the headers that go out.
 * Real Fastify (http2), the real API and the local chain.
 */

import Fastify from 'fastify';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { crawlgateFastify } from '@crawlgate/middleware/fastify';
import { GPTBOT, startGatedSite, type GatedSite } from './support/gated-site';

let site: GatedSite;
beforeAll(async () => {
  site = await startGatedSite();
}, 60_000);
afterAll(() => site?.close(), 60_000);

/** GET over HTTP/2: status, headers and body. */
function get(port: number, path: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: Record<string, unknown>; text: string }>((resolve, reject) => {
    const client = connect(`http://127.0.0.1:${port}`);
    client.on('error', reject);
    const request = client.request({ ':path': path, ...headers });
    let text = '';
    let answer: Record<string, unknown> = {};
    request.setEncoding('utf8');
    request.on('response', (h) => (answer = h));
    request.on('data', (chunk: string) => (text += chunk));
    request.on('end', () => {
      client.close();
      resolve({ status: Number(answer[':status']), headers: answer, text });
    });
    request.on('error', reject);
    request.end();
  });
}

it('keeps a paid answer no-store over HTTP/2 when a hook before the gate passes caching headers to writeHead', async () => {
  // Passed on by a writeHead wrapped before the gate's, Cache-Control: public replaced no-store, and a
  // shared cache could keep the paid page with its token.
  const app = Fastify({ http2: true });
  app.addHook('onRequest', (_request, reply, done) => {
    type WriteHead = (this: unknown, status: unknown, headers?: Record<string, unknown>) => unknown;
    const raw = reply.raw as unknown as { writeHead: WriteHead };
    const writeHead = raw.writeHead;
    raw.writeHead = function (this: unknown, status: unknown, headers?: Record<string, unknown>) {
      return writeHead.call(this, status, { ...(headers ?? {}), 'cache-control': 'public, max-age=600' });
    };
    done();
  });
  await app.register(crawlgateFastify, site.options());
  app.get('/articles/:id', async (_request, reply) => reply.type('text/html').send('<p>paid page</p>'));
  await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    const { port } = app.server.address() as AddressInfo;
    const offer = await get(port, '/articles/h2', { 'user-agent': GPTBOT });
    expect(offer.status).toBe(402);
    const paid = await get(port, '/articles/h2', {
      'user-agent': GPTBOT,
      'x-payment': await site.xPayment(JSON.parse(offer.text)),
    });
    expect([paid.status, paid.text]).toEqual([200, '<p>paid page</p>']);
    expect(paid.headers['x-crawlgate-token']).toBeTruthy();
    expect(paid.headers['cache-control']).toBe('no-store');
  } finally {
    await app.close();
  }
});

it.each(['respondWithFile', 'respondWithFD'] as const)(
  'keeps a paid answer no-store and its token over HTTP/2 when the route sends a file with %s',
  async (method) => {
    // These send their headers by a path of their own: the page left cacheable, without its token.
    const file = join(mkdtempSync(join(tmpdir(), 'h2-')), 'page.html');
    writeFileSync(file, '<p>paid file</p>');
    const app = Fastify({ http2: true });
    await app.register(crawlgateFastify, site.options());
    app.get('/files/:id', async (_request, reply) => {
      reply.hijack();
      const stream = (reply.raw as unknown as { stream: import('node:http2').ServerHttp2Stream }).stream;
      const headers = { 'content-type': 'text/html', 'cache-control': 'public, max-age=600' };
      if (method === 'respondWithFile')
        stream.respondWithFile(file, headers, {
          // A statCheck changes the headers after they were given: the gate's are set again after it.
          statCheck(_stat, given) {
            given['cache-control'] = 'public, max-age=600';
            delete given['x-crawlgate-token'];
          },
        });
      else stream.respondWithFD((await import('node:fs')).openSync(file, 'r'), headers);
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const { port } = app.server.address() as AddressInfo;
      const offer = await get(port, `/files/${method}`, { 'user-agent': GPTBOT });
      const paid = await get(port, `/files/${method}`, {
        'user-agent': GPTBOT,
        'x-payment': await site.xPayment(JSON.parse(offer.text)),
      });
      expect([paid.status, paid.text]).toEqual([200, '<p>paid file</p>']);
      expect(paid.headers['x-crawlgate-token']).toBeTruthy();
      expect(paid.headers['cache-control']).toBe('no-store');
    } finally {
      await app.close();
    }
  },
);
