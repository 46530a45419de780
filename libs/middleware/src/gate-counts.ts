/*
 * Counts of the 402s this process answered, per UTC day, sent to the API in batches (at most one
 * call per interval, and once more on close) so a site's stats know how many gates were offered;
 * the same call carries the crawler counts (crawler-counts.ts). Memory is a few days' counters at
 * most. A report that fails is dropped: it loses counts, never money, and never delays a request.
 */

import type { ApiClient } from './api-client';
import { createCrawlerCounter, type CrawlerSighting } from './crawler-counts';

export interface GateCounter {
  /** One more gate offered now. */
  count(): void;
  /** One more request classified, for the crawler analytics. */
  countCrawler(sighting: CrawlerSighting): void;
  /** Sends what is counted (the interval's flush, and close). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface GateCounterOptions {
  api: ApiClient;
  intervalMs: number;
  onError(message: string): void;
  now?: () => number;
}

/** Counters of days this old are dropped unsent rather than kept without bound. */
const MAX_DAYS = 3;

export function createGateCounter({ api, intervalMs, onError, now = Date.now }: GateCounterOptions): GateCounter {
  let counts = new Map<string, number>();
  const crawlers = createCrawlerCounter(now);
  let timer: ReturnType<typeof setInterval> | undefined;

  async function flush(): Promise<void> {
    if (counts.size === 0 && !crawlers.pending) return;
    const batch = [...counts].map(([day, gates]) => ({ day, gates }));
    counts = new Map();
    await api
      .reportGateCounts({ counts: batch, ...crawlers.drain() })
      .catch((error: Error) =>
        onError(`gate and crawler counts not reported (${error.message}); they are lost, payments are not affected`),
      );
  }

  function startTimer(): void {
    if (timer) return;
    timer = setInterval(() => void flush(), intervalMs);
    (timer as { unref?: () => void }).unref?.();
  }

  return {
    count() {
      const day = new Date(now()).toISOString().slice(0, 10);
      counts.set(day, (counts.get(day) ?? 0) + 1);
      if (counts.size > MAX_DAYS) counts.delete(counts.keys().next().value!);
      startTimer();
    },
    countCrawler(sighting) {
      crawlers.count(sighting);
      startTimer();
    },
    flush,
    async close() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await flush();
    },
  };
}
