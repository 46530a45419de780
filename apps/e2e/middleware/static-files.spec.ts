/*
 * Static files priced by their file names, served by express.static and @fastify/static behind the
 * gate: a crawler asks for the same file by another URL the static server answers (a directory's
 * URL for its index file, a name without its extension). Real servers on loopback, the real API
 * and the local chain. Pricing: files named *.html under /docs and the index of /docs/secret are
 * paid, everything else free (the publisher prices files, not pages). Beside each paid file lie
 * its precompressed siblings (report.html.gz, .br), which @fastify/static's preCompressed serves
 * for it and both servers serve under their own names.
 */

import fastifyStatic from '@fastify/static';
import express from 'express';
import Fastify from 'fastify';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { crawlgateExpress } from '@crawlgate/middleware/express';
import { crawlgateFastify } from '@crawlgate/middleware/fastify';
import type { CrawlgateOptions } from '../../../libs/middleware/src/crawlgate';
import { GPTBOT, startGatedSite, type GatedSite } from './support/gated-site';
import { rawRequest } from './support/raw-request';
import { listening, type SiteServer } from './support/site-servers';

const PAID = 'paid file';

function docsDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'crawlgate-docs-'));
  mkdirSync(join(dir, 'secret'));
  const file = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    writeFileSync(join(dir, `${name}.gz`), gzipSync(text));
    writeFileSync(join(dir, `${name}.br`), brotliCompressSync(text));
  };
  file('report.html', `<p>${PAID}: report</p>`);
  file(join('secret', 'index.html'), `<p>${PAID}: secret index</p>`);
  file('notes.txt', 'free notes');
  writeFileSync(join(dir, 'archive.gz'), gzipSync('free archive'));
  return dir;
}

const SERVERS: { name: string; start(options: CrawlgateOptions): Promise<SiteServer> }[] = [
  {
    name: 'Express, express.static',
    async start(options) {
      const app = express();
      app.use(crawlgateExpress(options));
      app.use('/docs', express.static(docsDir(), { extensions: ['html'] }));
      return listening(app.listen(0, '127.0.0.1'));
    },
  },
  {
    name: 'Fastify, @fastify/static',
    async start(options) {
      const app = Fastify();
      await app.register(crawlgateFastify, options);
      await app.register(fastifyStatic, {
        root: docsDir(),
        prefix: '/docs/',
        extensions: ['html'],
        preCompressed: true,
      });
      await app.listen({ port: 0, host: '127.0.0.1' });
      return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, close: () => app.close() };
    },
  },
];

let site: GatedSite;
beforeAll(async () => {
  site = await startGatedSite();
  await site.setPricing({
    default_price_usd: '0',
    rules: [
      { path: '/docs/*.html', price_usd: '0.05' },
      { path: '/docs/secret/index.html', price_usd: '0.07' },
    ],
  });
}, 60_000);
afterAll(() => site?.close());

describe.each(SERVERS)('$name, extensions: ["html"]', ({ start }) => {
  let server: SiteServer;
  beforeAll(async () => {
    server = await start(site.options({ staticFiles: { extensions: ['html'] } }));
  });
  afterAll(() => server?.close());

  it.each([
    ['/docs/report.html', '0.05'],
    ['/docs/report', '0.05'],
    ['/docs/secret/index.html', '0.07'],
    ['/docs/secret/', '0.07'],
    ['/docs/secret', '0.07'],
    ['/docs/secret/index', '0.07'],
    ['/docs/report.html.gz', '0.05'],
    ['/docs/report.html.br', '0.05'],
    ['/docs/secret/index.html.gz', '0.07'],
    ['/docs/secret/index.html.br', '0.07'],
    // A case-insensitive disk (macOS, Windows) serves report.html.gz for these.
    ['/docs/report.html.GZ', '0.05'],
    ['/docs/secret/INDEX.HTML.Br', '0.07'],
  ])('answers a bot asking for %s with a 402 at the file’s price, never the file', async (path, price) => {
    const answer = await rawRequest(server, path, { 'user-agent': GPTBOT });
    expect(answer.text).not.toContain(PAID);
    expect(answer.status).toBe(402);
    expect(JSON.parse(answer.text)).toMatchObject({ price_usd: price });
  });

  it('serves a free file free, and the paid ones to a person', async () => {
    const notes = await rawRequest(server, '/docs/notes.txt', { 'user-agent': GPTBOT });
    expect([notes.status, notes.text]).toEqual([200, 'free notes']);
    // The sibling of a free file is free: a rule on *.html does not name notes.txt.
    expect((await rawRequest(server, '/docs/notes.txt.gz', { 'user-agent': GPTBOT })).status).toBe(200);
    // A compressed file whose name has no extension compresses that name, never a guessed *.html.
    expect((await rawRequest(server, '/docs/archive.gz', { 'user-agent': GPTBOT })).status).toBe(200);
    const person = await rawRequest(server, '/docs/report', {
      'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0',
    });
    expect(person.text).toContain(PAID);
  });
});

describe('without the static servers’ extensions in staticFiles', () => {
  it('prices the directory URLs all the same (index.html is the default), and says in the README to set extensions', async () => {
    const server = await SERVERS[0].start(site.options());
    try {
      for (const path of ['/docs/secret/', '/docs/secret'])
        expect((await rawRequest(server, path, { 'user-agent': GPTBOT })).text).not.toContain(PAID);
    } finally {
      await server.close();
    }
  });
});
