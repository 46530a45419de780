import { rememberLast } from '@crawlgate/core';
import { notCharged } from '../http/api-error';

/**
 * What one publisher's sites may compile on an instance in a minute, in their tables' estimated heap
 * bytes (PriceTable.heapBytes): a site's compile costs CPU in proportion. A publisher with sites
 * heavier together than the price cache holds, read in turn, had each read compile one again: one
 * free account could keep a core busy. 256 MiB is ten sites at MAX_SITE_PRICES_HEAP_BYTES a minute,
 * and some 2,500 sites of 100 rules.
 */
export const COMPILED_BYTES_PER_MINUTE = 256 * 1024 * 1024;

/** Publishers whose compiles an instance counts; beyond, the least recently charged is forgotten. */
const MAX_PUBLISHERS_COUNTED = 10_000;

const MINUTE_MS = 60_000;

/** Compiles counted per publisher over a sliding minute (this one, and the last weighed by what is left of it). */
export class CompileBudget {
  private readonly spent = new Map<string, { minute: number; bytes: number; before: number }>();

  constructor(
    private readonly perMinute = COMPILED_BYTES_PER_MINUTE,
    private readonly now: () => number = Date.now,
  ) {}

  /** 503, nothing charged, while `publisherId`'s sites compiled more than a minute's worth. */
  assertMayCompile(publisherId: string): void {
    if (this.recent(publisherId) <= this.perMinute) return;
    throw notCharged(
      "This publisher's price rules were compiled more often than an instance allows in a minute (its sites' rules together are heavier than the instance keeps); nothing was charged, retry shortly",
      30,
    );
  }

  charge(publisherId: string, bytes: number): void {
    const minute = Math.floor(this.now() / MINUTE_MS);
    const entry = this.spent.get(publisherId);
    const current =
      entry?.minute === minute ? entry : { minute, bytes: 0, before: entry?.minute === minute - 1 ? entry.bytes : 0 };
    current.bytes += bytes;
    rememberLast(this.spent, publisherId, current, MAX_PUBLISHERS_COUNTED);
  }

  private recent(publisherId: string): number {
    const entry = this.spent.get(publisherId);
    if (!entry) return 0;
    const now = this.now();
    const minute = Math.floor(now / MINUTE_MS);
    const left = 1 - (now % MINUTE_MS) / MINUTE_MS;
    if (entry.minute === minute) return entry.bytes + entry.before * left;
    return entry.minute === minute - 1 ? entry.bytes * left : 0;
  }
}
