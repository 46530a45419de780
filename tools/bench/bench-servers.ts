import { serve } from '@hono/node-server';
import type { CrawlgateOptions } from '@crawlgate/middleware';
import { crawlgateExpress } from '@crawlgate/middleware/express';
import { crawlgateFastify } from '@crawlgate/middleware/fastify';
import { crawlgateHono } from '@crawlgate/middleware/hono';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * One route, /article/:id, per framework: bare when `gate` is undefined, behind the framework's
 * cheapest middleware that does nothing when it is EMPTY_MIDDLEWARE (what any gate costs there),
 * else behind the Crawlgate adapter set up as libs/middleware/README.md tells a publisher to.
 */
export type Framework = 'Express' | 'Fastify' | 'Hono';
export const FRAMEWORKS: Framework[] = ['Express', 'Fastify', 'Hono'];

export interface Listening {
  port: number;
  /** Closes the server, and the gate (which reports its last 402 counts). */
  close(): Promise<void>;
}

const article = (id: string) => `article ${id}`;

export const EMPTY_MIDDLEWARE = 'empty middleware';
export type Gate = CrawlgateOptions | typeof EMPTY_MIDDLEWARE | undefined;

export const startServer: Record<Framework, (gate: Gate) => Promise<Listening>> = {
  async Express(gate) {
    const app = express();
    if (gate === EMPTY_MIDDLEWARE) app.use((_request, _response, next) => next());
    const middleware = typeof gate === 'object' ? crawlgateExpress(gate) : undefined;
    if (middleware) app.use(middleware);
    app.get('/article/:id', (request, response) => void response.send(article(request.params.id)));
    return listening(app.listen(0, '127.0.0.1'), () => middleware?.close());
  },

  async Fastify(gate) {
    const app = Fastify();
    if (gate === EMPTY_MIDDLEWARE) app.addHook('onRequest', (_request, _reply, done) => done());
    else if (gate) await app.register(crawlgateFastify, gate);
    app.get<{ Params: { id: string } }>('/article/:id', async (request) => article(request.params.id));
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { port: (app.server.address() as AddressInfo).port, close: () => app.close() };
  },

  async Hono(gate) {
    const app = new Hono();
    // Hono routes strictly (case and trailing slash): the README says to tell the gate so.
    if (gate === EMPTY_MIDDLEWARE) app.use('*', (_c, next) => next());
    const middleware =
      typeof gate === 'object'
        ? crawlgateHono({ ...gate, routing: { caseSensitive: true, strictTrailingSlash: true } })
        : undefined;
    if (middleware) app.use('*', middleware);
    app.get('/article/:id', (c) => c.text(article(c.req.param('id'))));
    return listening(serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server, () => middleware?.close());
  },
};

async function listening(server: Server, closeGate: () => Promise<void> | undefined): Promise<Listening> {
  if (!server.listening) await new Promise((resolve) => server.once('listening', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      await closeGate();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
