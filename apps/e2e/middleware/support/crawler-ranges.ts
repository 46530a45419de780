/*
 * Crawler operators' IP range lists, served on loopback the way Google, Bing and OpenAI publish
 * theirs, so that no test fetches the real ones. `loopback.json` makes this machine every
 * operator's network (what the suites that are not about IP verification need: their Googlebot
 * comes from 127.0.0.1); `public.json` holds only public addresses, so a crawler's User-Agent from
 * loopback is a spoof. One server per jest worker, unref'd.
 */

import { BOT_CATALOGUE_ENTRIES } from '@crawlgate/core';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CrawlgateOptions } from '../../../../libs/middleware/src/crawlgate';

const LISTS: Record<string, { ipv4Prefix?: string; ipv6Prefix?: string }[]> = {
  '/loopback.json': [{ ipv4Prefix: '127.0.0.0/8' }, { ipv6Prefix: '::1/128' }],
  '/public.json': [{ ipv4Prefix: '66.249.64.0/19' }, { ipv6Prefix: '2001:4860:4801:10::/64' }],
};

let started: Promise<string> | undefined;

/** The base URL of this worker's range server. */
export function crawlerRangesUrl(): Promise<string> {
  started ??= new Promise<string>((resolve) => {
    const server: Server = createServer((request, response) => {
      const prefixes = LISTS[request.url ?? ''];
      if (!prefixes) return void response.writeHead(404).end();
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ creationTime: '2026-11-28T00:00:00', prefixes }));
    });
    server.unref();
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
  return started;
}

/** crawlerIps options giving every catalogue crawler that publishes ranges the list `file` instead. */
export async function crawlerRanges(file: 'loopback.json' | 'public.json'): Promise<CrawlgateOptions['crawlerIps']> {
  const url = `${await crawlerRangesUrl()}/${file}`;
  const sources: Record<string, string> = {};
  for (const entry of BOT_CATALOGUE_ENTRIES) if (entry.ipRanges) sources[entry.name] = url;
  return { sources };
}
