import { signAccessToken } from '@crawlgate/core';
import { crawlgateExpress } from '@crawlgate/middleware/express';
import { crawlgateFastify } from '@crawlgate/middleware/fastify';
import express from 'express';
import Fastify from 'fastify';
import type { AddressInfo } from 'node:net';
import { format } from './measure';
import { load, type LoadResult } from './load';

const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)';

/**
 * What the gate costs a paid request: an AI crawler presenting a valid access token, checked
 * locally (no API call), on an Express and a Fastify route, against the same route without it.
 */
export async function middlewareBench(): Promise<string> {
  const siteId = '0b8e8f4a-1c2d-4e5f-8a9b-0c1d2e3f4a5b';
  const secret = 'cgsec_' + 's'.repeat(43);
  const now = Math.floor(Date.now() / 1000);
  const token = signAccessToken({ gate_id: siteId, site_id: siteId, url: '/article/42', kid: 'k1', iat: now, exp: now + 1800 }, secret);
  // Nothing listens there: a request that reached the API would fail the run (failMode closed).
  const options = { apiUrl: 'http://127.0.0.1:9', siteId, siteToken: 'st_' + 't'.repeat(43), secret, failMode: 'closed' as const };
  const request = [{ method: 'GET' as const, path: '/article/42', headers: { 'user-agent': GPTBOT, 'x-crawlgate-token': token } }];

  const rows: [LoadResult, LoadResult][] = [];
  for (const [name, start] of [
    ['Express', startExpress],
    ['Fastify', startFastify],
  ] as const) {
    const bare = await start(undefined);
    const baseline = await load(`${name} route, no middleware`, bare.url, request, 6);
    await bare.close();
    const gated = await start(options);
    const ours = await load(`${name} route + crawlgate (paid request)`, gated.url, request, 6);
    await gated.close();
    if (Object.keys(ours.statuses).some((status) => status !== '200')) throw new Error(`gated ${name} answered ${JSON.stringify(ours.statuses)}`);
    rows.push([ours, baseline]);
  }
  return [
    '### Middleware overhead (paid request, token checked locally)',
    '',
    '| case | req/s | p99 ms | baseline | req/s | p99 ms | ratio (ours/baseline) |',
    '|---|---:|---:|---|---:|---:|---:|',
    ...rows.map(([ours, base]) => `| ${ours.name} | ${format(ours.requestsPerSecond)} | ${ours.p99Ms} | ${base.name} | ${format(base.requestsPerSecond)} | ${base.p99Ms} | ${format(ours.requestsPerSecond / base.requestsPerSecond, 2)} |`),
  ].join('\n');
}

async function startExpress(options: Parameters<typeof crawlgateExpress>[0] | undefined) {
  const app = express();
  if (options) app.use(crawlgateExpress(options));
  app.get('/article/:id', (request, response) => void response.send(`article ${request.params.id}`));
  const server = await new Promise<import('node:http').Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

async function startFastify(options: Parameters<typeof crawlgateExpress>[0] | undefined) {
  const app = Fastify();
  if (options) await app.register(crawlgateFastify, options);
  app.get('/article/:id', async (request) => `article ${(request.params as { id: string }).id}`);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, close: () => app.close() };
}
