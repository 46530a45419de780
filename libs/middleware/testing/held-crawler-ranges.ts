import type { CrawlerIpsOptions } from '../src/crawler-ips';

/**
 * `crawlerIps` options whose fetch of an operator's ranges (Google's, answered as one /19) waits
 * until `release()`: a crawler's request waits for its address check as long as a test needs.
 */
export function heldCrawlerRanges(): { crawlerIps: CrawlerIpsOptions; release: () => void } {
  let release = () => undefined as void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const fetch = (async () => {
    await released;
    return new Response(JSON.stringify({ prefixes: [{ ipv4Prefix: '66.249.64.0/19' }] }));
  }) as typeof globalThis.fetch;
  return { crawlerIps: { timeoutMs: 60_000, fetch }, release };
}
