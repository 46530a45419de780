/*
 * Whether a request that names a crawler by its User-Agent comes from that crawler's operator:
 * its address against the IP ranges the operator publishes (Google, Bing, Apple, OpenAI,
 * Perplexity; the catalogue's `ipRanges`). A User-Agent anyone can send; the address of a TCP
 * connection, only its end can.
 *
 * Fails closed: ranges that never loaded, an address the gate cannot read, or one outside the
 * ranges answer "out", which never verifies (bots/identify.ts: such a crawler is not allowed).
 * Each list is fetched when a request first needs it, kept `ttlMs`, refreshed in the background
 * after that, and kept through failed refreshes for at most `maxStaleMs`; a failed fetch is not
 * retried for `retryMs`. The lists are the catalogue's, a bounded set, and publisher-configured
 * URLs, never one a visitor names: no cache bound beyond that is needed.
 */

import { cappedText, withinDeadline } from '@crawlgate/core';
import { MAX_TIMER_MS, numberOptions } from './number-options';
import { parseRangeList, type AddressSet } from './range-list';

export interface CrawlerIpsOptions {
  /** Catalogue name → the URL of its ranges, added to or replacing the catalogue's; `false` stops checking that crawler. */
  sources?: Record<string, string | false>;
  /** Per fetch, body included; default 2000 ms. */
  timeoutMs?: number;
  /** Default 1 MiB. */
  maxBytes?: number;
  /** How long a list is used before it is fetched again (in the background); default 24 h. */
  ttlMs?: number;
  /** How long a list keeps verifying while its refreshes fail; default 7 days. */
  maxStaleMs?: number;
  /** How long a failed fetch waits before the next; default 60 s. */
  retryMs?: number;
  fetch?: typeof fetch;
  now?: () => number;
}

/** "in": the address is in the operator's ranges; "out": it is not, or cannot be known; "loading": the list is being fetched. */
export type AddressCheck = 'in' | 'out' | 'loading';

export interface CrawlerIps {
  /** Undefined when the crawler publishes no ranges (or its source was turned off). Starts a fetch when the list needs one. */
  check(crawler: string, address: string | undefined): AddressCheck | undefined;
  /** Settles when the crawler's list has loaded or failed; never rejects. */
  loaded(crawler: string): Promise<void>;
}

interface List {
  addresses?: AddressSet;
  loadedAt: number;
  retryAt: number;
  inflight?: Promise<void>;
}

export function createCrawlerIps(
  catalogueSources: ReadonlyMap<string, string>,
  options: CrawlerIpsOptions = {},
  warn: (message: string) => void = () => undefined,
): CrawlerIps {
  const duration = numberOptions(options, 'crawlerIps', warn);
  const timeoutMs = duration('timeoutMs', 2000, MAX_TIMER_MS);
  const maxBytes = duration('maxBytes', 1024 * 1024);
  const ttlMs = duration('ttlMs', 24 * 3600_000);
  const maxStaleMs = duration('maxStaleMs', 7 * 24 * 3600_000);
  const retryMs = duration('retryMs', 60_000);
  const now = options.now ?? Date.now;
  const http = options.fetch ?? ((input, init) => globalThis.fetch(input, init));

  const sources = new Map(catalogueSources);
  for (const [crawler, url] of Object.entries(options.sources ?? {})) {
    if (url === false) sources.delete(crawler);
    else if (typeof url === 'string' && url !== '') sources.set(crawler, url);
    else {
      // Left undefined or mistyped (an unset environment variable): the check stays, on the
      // catalogue's list, or on none that ever loads (so that crawler is never verified).
      warn(`crawlerIps.sources["${crawler}"] is neither a URL nor false; keeping the catalogue's list, if any`);
      if (!sources.has(crawler)) sources.set(crawler, NO_LIST);
    }
  }
  const lists = new Map<string, List>();

  function listOf(url: string): List {
    let list = lists.get(url);
    if (!list) lists.set(url, (list = { loadedAt: 0, retryAt: 0 }));
    return list;
  }

  /** Never rejects, whatever the fetch or the logger throw: it runs with no one awaiting it. */
  function refresh(url: string, list: List): Promise<void> {
    list.inflight ??= withinDeadline(load(url), timeoutMs) // the gate's own: a fetch may ignore its signal
      .then(
        (addresses) => {
          Object.assign(list, { addresses, loadedAt: now(), retryAt: 0 });
        },
        (error: unknown) => {
          list.retryAt = now() + retryMs;
          try {
            warn(
              `${url === NO_LIST ? 'a crawler whose crawlerIps.sources entry names no list' : `the IP ranges at ${url}`} could not be loaded (${reasonOf(error)}); the crawlers they verify are not allowed meanwhile`,
            );
          } catch {
            // A logger that fails changes nothing here.
          }
        },
      )
      .catch(() => undefined) // a clock or anything else that throws above: the list stays as it was
      .finally(() => {
        list.inflight = undefined;
      });
    return list.inflight;
  }

  async function load(url: string): Promise<AddressSet> {
    if (url === NO_LIST) throw new Error('no list: crawlerIps.sources gave none');
    const response = await http(url, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw new Error(`answered ${response.status}`);
    }
    const parsed = parseRangeList(await cappedText(response, maxBytes, 'the list'));
    if (!parsed.ok) throw new Error(parsed.reason);
    return parsed.addresses;
  }

  return {
    check(crawler, address) {
      const url = sources.get(crawler);
      if (url === undefined) return undefined;
      const list = listOf(url);
      const at = now();
      const usable = list.addresses !== undefined && at - list.loadedAt <= maxStaleMs;
      if (!list.inflight && at >= list.retryAt && (!usable || at - list.loadedAt > ttlMs)) void refresh(url, list);
      if (usable) return address !== undefined && list.addresses!.has(address) ? 'in' : 'out';
      return list.inflight ? 'loading' : 'out';
    },
    loaded(crawler) {
      const url = sources.get(crawler);
      return (url !== undefined && lists.get(url)?.inflight) || Promise.resolve();
    },
  };
}

/** A source configured wrongly for a crawler the catalogue has no list for: it never loads. */
const NO_LIST = '';

/** A failure's message, whatever was thrown (a fetch may reject with anything, even what cannot be printed). */
function reasonOf(error: unknown): string {
  try {
    const message = (error as { message?: unknown } | null | undefined)?.message;
    return typeof message === 'string' ? message : String(error);
  } catch {
    return 'an error that cannot be read';
  }
}

/** The catalogue's crawlers that publish their ranges, by name. */
export function catalogueIpSources(
  entries: ReadonlyArray<{ name: string; ipRanges?: string }>,
): ReadonlyMap<string, string> {
  return new Map(entries.flatMap((entry) => (entry.ipRanges ? [[entry.name, entry.ipRanges] as const] : [])));
}
