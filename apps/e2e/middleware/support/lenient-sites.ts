/*
 * One site per framework whose router is as lenient as its options allow (case-insensitive, trailing
 * slashes ignored, `;` as a delimiter where offered), each gated by its adapter with default options
 * and serving: /premium/:id, /cheap/:id, /free/:id, /:page, /:section/:page and /:section/:year/:page
 * (a first segment bound to a parameter, as `/:locale` sites do), /robots.txt, and (Express, Fastify)
 * static files under /static: premium/a.html is premium content, free/x.html is free.
 * Real servers on loopback, port chosen by the OS.
 */

import fastifyStatic from '@fastify/static';
import { Controller, Get, Module, Param } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { serve } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crawlgateExpress } from '@crawlgate/middleware/express';
import { crawlgateFastify } from '@crawlgate/middleware/fastify';
import { crawlgateFetch } from '@crawlgate/middleware/fetch';
import { crawlgateHono } from '@crawlgate/middleware/hono';
import { CrawlgateModule } from '@crawlgate/middleware/nest';
import type { CrawlgateOptions } from '../../../../libs/middleware/src/crawlgate';
import { listenNest, listening, type SiteServer } from './site-servers';

export interface LenientFramework {
  name: string;
  /** The router options this site runs with, as the issue names them. */
  routing: string;
  hasStatic: boolean;
  start(options: CrawlgateOptions): Promise<SiteServer>;
}

export const content = (kind: string, id: string) => `<p>${kind} content ${id}</p>`;
const ROBOTS = 'User-agent: *\nAllow: /\n';

function staticDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'crawlgate-static-'));
  mkdirSync(join(dir, 'premium'));
  mkdirSync(join(dir, 'free'));
  writeFileSync(join(dir, 'premium', 'a'), content('premium', 'static'));
  writeFileSync(join(dir, 'free', 'x'), content('free', 'static'));
  return dir;
}

export const LENIENT_FRAMEWORKS: LenientFramework[] = [
  {
    name: 'Express',
    routing: 'defaults: case-insensitive, non-strict; express.static',
    hasStatic: true,
    async start(options) {
      const app = express();
      app.use(crawlgateExpress(options));
      app.use('/static', express.static(staticDir()));
      app.get('/robots.txt', (_req, res) => void res.type('text/plain').send(ROBOTS));
      for (const kind of ['premium', 'cheap', 'free'])
        app.get(`/${kind}/:id`, (req, res) => void res.type('text/html').send(content(kind, String(req.params.id))));
      app.get('/:page', (req, res) => void res.type('text/html').send(content('default', String(req.params.page))));
      app.get('/:section/:page', (req, res) => void res.type('text/html').send(content('section', req.params.page)));
      app.get(
        '/:section/:year/:page',
        (req, res) => void res.type('text/html').send(content('dated', req.params.page)),
      );
      return listening(app.listen(0, '127.0.0.1'));
    },
  },
  {
    name: 'Fastify',
    routing: 'caseSensitive false, ignoreTrailingSlash, ignoreDuplicateSlashes, useSemicolonDelimiter; @fastify/static',
    hasStatic: true,
    async start(options) {
      // useSemicolonDelimiter is a router option Fastify 5 takes but does not type.
      const app = Fastify({
        routerOptions: {
          caseSensitive: false,
          ignoreTrailingSlash: true,
          ignoreDuplicateSlashes: true,
          useSemicolonDelimiter: true,
        } as object,
      });
      await app.register(crawlgateFastify, options);
      await app.register(fastifyStatic, { root: staticDir(), prefix: '/static/' });
      app.get('/robots.txt', async (_req, reply) => reply.type('text/plain').send(ROBOTS));
      for (const kind of ['premium', 'cheap', 'free']) {
        app.get<{ Params: { id: string } }>(`/${kind}/:id`, async (req, reply) =>
          reply.type('text/html').send(content(kind, req.params.id)),
        );
      }
      app.get<{ Params: { page: string } }>('/:page', async (req, reply) =>
        reply.type('text/html').send(content('default', req.params.page)),
      );
      app.get<{ Params: { page: string } }>('/:section/:page', async (req, reply) =>
        reply.type('text/html').send(content('section', req.params.page)),
      );
      app.get<{ Params: { page: string } }>('/:section/:year/:page', async (req, reply) =>
        reply.type('text/html').send(content('dated', req.params.page)),
      );
      await app.listen({ port: 0, host: '127.0.0.1' });
      return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, close: () => app.close() };
    },
  },
  {
    name: 'fetch (Hono)',
    routing: 'strict: false',
    hasStatic: false,
    async start(options) {
      const gate = crawlgateFetch(options);
      const app = new Hono({ strict: false });
      app.use('*', async (c, next) => {
        const { response, headers } = await gate(c.req.raw, getConnInfo(c).remote.address);
        if (response) return response;
        await next();
        headers.forEach((value, name) => c.res.headers.set(name, value));
      });
      app.get('/robots.txt', (c) => c.text(ROBOTS));
      for (const kind of ['premium', 'cheap', 'free'])
        app.get(`/${kind}/:id`, (c) => c.html(content(kind, c.req.param('id'))));
      app.get('/:page', (c) => c.html(content('default', c.req.param('page'))));
      app.get('/:section/:page', (c) => c.html(content('section', c.req.param('page'))));
      app.get('/:section/:year/:page', (c) => c.html(content('dated', c.req.param('page'))));
      return listening(serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server);
    },
  },
  {
    name: 'Hono',
    routing: 'strict: false; crawlgateHono',
    hasStatic: false,
    async start(options) {
      const app = new Hono({ strict: false });
      app.use('*', crawlgateHono(options));
      app.get('/robots.txt', (c) => c.text(ROBOTS));
      for (const kind of ['premium', 'cheap', 'free'])
        app.get(`/${kind}/:id`, (c) => c.html(content(kind, c.req.param('id'))));
      app.get('/:page', (c) => c.html(content('default', c.req.param('page'))));
      app.get('/:section/:page', (c) => c.html(content('section', c.req.param('page'))));
      app.get('/:section/:year/:page', (c) => c.html(content('dated', c.req.param('page'))));
      return listening(serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server);
    },
  },
  {
    name: 'NestJS (Fastify)',
    routing: 'FastifyAdapter with caseSensitive false, ignoreTrailingSlash, useSemicolonDelimiter',
    hasStatic: false,
    async start(options) {
      @Controller()
      class PagesController {
        @Get('robots.txt') robots() {
          return ROBOTS;
        }
        @Get('premium/:id') premium(@Param('id') id: string) {
          return content('premium', id);
        }
        @Get('cheap/:id') cheap(@Param('id') id: string) {
          return content('cheap', id);
        }
        @Get('free/:id') free(@Param('id') id: string) {
          return content('free', id);
        }
        @Get(':page') page(@Param('page') page: string) {
          return content('default', page);
        }
        @Get(':section/:page') section(@Param('page') page: string) {
          return content('section', page);
        }
        @Get(':section/:year/:page') dated(@Param('page') page: string) {
          return content('dated', page);
        }
      }
      @Module({ imports: [CrawlgateModule.forRoot(options)], controllers: [PagesController] })
      class SiteModule {}

      const adapter = new FastifyAdapter({
        routerOptions: { caseSensitive: false, ignoreTrailingSlash: true, useSemicolonDelimiter: true } as object,
      });
      return listenNest(await NestFactory.create(SiteModule, adapter, { logger: false }));
    },
  },
];

/**
 * Routers lenient in effect while their settings read strict to an adapter that looks: Express's
 * `express.Router()` ignores the app's case and strict settings, and Fastify applies top-level
 * `caseSensitive`/`ignoreTrailingSlash` even when `routerOptions`, given too, says otherwise.
 */
export const MISREAD_ROUTERS: LenientFramework[] = [
  {
    name: 'Express, app settings strict, routes in express.Router()',
    routing: "app.set('case sensitive routing', true), app.set('strict routing', true); express.Router()",
    hasStatic: false,
    async start(options) {
      const app = express();
      app.set('case sensitive routing', true);
      app.set('strict routing', true);
      app.use(crawlgateExpress(options));
      const pages = express.Router();
      for (const kind of ['premium', 'cheap', 'free'])
        pages.get(`/${kind}/:id`, (req, res) => void res.type('text/html').send(content(kind, String(req.params.id))));
      app.use(pages);
      return listening(app.listen(0, '127.0.0.1'));
    },
  },
  {
    name: 'Fastify, lenient top-level options beside routerOptions',
    routing: 'caseSensitive false, ignoreTrailingSlash (top level); routerOptions { maxParamLength }',
    hasStatic: false,
    async start(options) {
      const app = Fastify({ caseSensitive: false, ignoreTrailingSlash: true, routerOptions: { maxParamLength: 200 } });
      await app.register(crawlgateFastify, options);
      for (const kind of ['premium', 'cheap', 'free']) {
        app.get<{ Params: { id: string } }>(`/${kind}/:id`, async (req, reply) =>
          reply.type('text/html').send(content(kind, req.params.id)),
        );
      }
      await app.listen({ port: 0, host: '127.0.0.1' });
      return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, close: () => app.close() };
    },
  },
];
