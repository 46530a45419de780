import { rememberLast } from '@crawlgate/core';

/**
 * Values read from the database, per key (a site), each tagged with the version it was loaded for
 * (a counter the row bumps on every change, read with the row a request loads anyway), so a change
 * made through any instance is seen at once.
 *
 * A load in flight is shared: requests that miss together wait for one load. Without that, a cold
 * instance under load sent one query per request until the first answer came back, and those
 * queries, queued behind each other in the pool, kept it cold for seconds (`npm run bench -- api`).
 */
export class VersionedCache<T> {
  private readonly entries = new Map<string, { version: number; value: Promise<T> }>();

  /** Beyond `maxEntries`, the least recently loaded key goes first. */
  constructor(private readonly maxEntries: number) {}

  get(key: string, version: number, load: () => Promise<T>): Promise<T> {
    const cached = this.entries.get(key);
    if (cached?.version === version) return cached.value;
    const entry = { version, value: load() };
    rememberLast(this.entries, key, entry, this.maxEntries);
    // A failed load is not kept: the next request tries again.
    entry.value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return entry.value;
  }
}
