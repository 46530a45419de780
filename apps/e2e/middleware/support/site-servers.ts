/*
 * One small site per framework, each gated by its adapter and serving the same pages:
 * /articles/:id (the content), /cached/:id (the same page sent with CDN_CACHING, as a site behind
 * a CDN sends its pages) and /robots.txt. Real servers on loopback, port chosen by the OS.
 */

import { Controller, Get, Header, Module, Param, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { serve } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { crawlgateExpress } from '@crawlgate/middleware/express';
import { crawlgateFastify } from '@crawlgate/middleware/fastify';
import { crawlgateFetch } from '@crawlgate/middleware/fetch';
import { crawlgateHono } from '@crawlgate/middleware/hono';
import { CrawlgateModule } from '@crawlgate/middleware/nest';
import type { CrawlgateOptions } from '../../../../libs/middleware/src/crawlgate';

export interface SiteServer {
  /** http://127.0.0.1:<port> */
  url: string;
  close(): Promise<void>;
}

export interface Framework {
  name: string;
  /** `port`: 0 (default) lets the OS choose. */
  start(options: CrawlgateOptions, port?: number): Promise<SiteServer>;
}

export const page = (id: string) => `<h1>Article ${id}</h1>`;
/** What a site behind a CDN sends with its pages: for browsers, and for the CDNs that read their own header. */
export const CDN_CACHING = {
  'cache-control': 'public, max-age=600',
  'cdn-cache-control': 'public, max-age=600',
  'surrogate-control': 'max-age=600',
  'vercel-cdn-cache-control': 'max-age=600',
  'netlify-cdn-cache-control': 'public, max-age=600',
  'edge-control': 'max-age=600',
};
const ROBOTS = 'User-agent: *\nAllow: /\n';

export const FRAMEWORKS: Framework[] = [
  {
    name: 'Express',
    async start(options, port = 0) {
      const app = express();
      app.use(crawlgateExpress(options));
      app.get('/robots.txt', (_req, res) => void res.type('text/plain').send(ROBOTS));
      app.get('/articles/:id', (req, res) => void res.type('text/html').send(page(req.params.id)));
      app.get('/cached/:id', (req, res) => void res.set(CDN_CACHING).send(page(req.params.id)));
      return listening(app.listen(port, '127.0.0.1'));
    },
  },
  {
    name: 'Fastify',
    async start(options, port = 0) {
      const app = Fastify();
      await app.register(crawlgateFastify, options);
      // Registered in a child context: the gate must still apply (skip-override).
      await app.register(async (child) => {
        child.get('/robots.txt', async (_req, reply) => reply.type('text/plain').send(ROBOTS));
        child.get<{ Params: { id: string } }>('/articles/:id', async (req, reply) =>
          reply.type('text/html').send(page(req.params.id)),
        );
        child.get<{ Params: { id: string } }>('/cached/:id', async (req, reply) =>
          reply.headers(CDN_CACHING).type('text/html').send(page(req.params.id)),
        );
      });
      await app.listen({ port, host: '127.0.0.1' });
      return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, close: () => app.close() };
    },
  },
  {
    name: 'fetch (Hono)',
    async start(options, port = 0) {
      const gate = crawlgateFetch(options);
      const app = new Hono();
      app.use('*', async (c, next) => {
        const { response, headers } = await gate(c.req.raw, getConnInfo(c).remote.address);
        if (response) return response;
        await next();
        headers.forEach((value, name) => c.res.headers.set(name, value));
      });
      app.get('/robots.txt', (c) => c.text(ROBOTS));
      app.get('/articles/:id', (c) => c.html(page(c.req.param('id'))));
      app.get('/cached/:id', (c) => c.html(page(c.req.param('id')), 200, CDN_CACHING));
      return listening(serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }) as Server);
    },
  },
  {
    name: 'Hono',
    async start(options, port = 0) {
      const app = new Hono();
      app.use('*', crawlgateHono({ ...options, routing: { caseSensitive: true, strictTrailingSlash: true } }));
      app.get('/robots.txt', (c) => c.text(ROBOTS));
      app.get('/articles/:id', (c) => c.html(page(c.req.param('id'))));
      app.get('/cached/:id', (c) => c.html(page(c.req.param('id')), 200, CDN_CACHING));
      return listening(serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }) as Server);
    },
  },
  {
    name: 'NestJS (Fastify)',
    async start(options, port = 0) {
      @Controller()
      class PagesController {
        @Get('robots.txt') robots() {
          return ROBOTS;
        }
        @Get('articles/:id') article(@Param('id') id: string) {
          return page(id);
        }
        @Get('cached/:id')
        @Header('Cache-Control', CDN_CACHING['cache-control'])
        @Header('CDN-Cache-Control', CDN_CACHING['cdn-cache-control'])
        @Header('Surrogate-Control', CDN_CACHING['surrogate-control'])
        @Header('Vercel-CDN-Cache-Control', CDN_CACHING['vercel-cdn-cache-control'])
        @Header('Netlify-CDN-Cache-Control', CDN_CACHING['netlify-cdn-cache-control'])
        @Header('Edge-Control', CDN_CACHING['edge-control'])
        cached(@Param('id') id: string) {
          return page(id);
        }
      }
      @Module({ imports: [CrawlgateModule.forRoot(options)], controllers: [PagesController] })
      class SiteModule {}

      return listenNest(await NestFactory.create(SiteModule, new FastifyAdapter(), { logger: false }), port);
    },
  },
];

/** A Nest app listening on loopback, as a SiteServer. */
export async function listenNest(app: INestApplication, port = 0): Promise<SiteServer> {
  await app.listen(port, '127.0.0.1');
  return { url: `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`, close: () => app.close() };
}

/** A Node server once it listens, as a SiteServer. */
export async function listening(server: Server): Promise<SiteServer> {
  if (!server.listening) await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
