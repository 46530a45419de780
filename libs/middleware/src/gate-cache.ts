/*
 * A small in-process cache of API answers (gates per path and visitor, the site's offer), so that
 * a crawler fetching one page again, or many requests at once, cost one API call. Concurrent
 * callers of one key share one load; a failed load is not kept; the oldest entries go first when
 * the cache is full, so a crawl of a million paths cannot grow it without bound.
 */

export interface TtlCacheOptions<V> {
  /** How long to keep a loaded value, in ms; 0 or less: do not keep it. */
  ttlMs(value: V): number;
  /** Default 10 000. */
  maxEntries?: number;
  /** Default Date.now; tests move time. */
  now?: () => number;
}

export interface TtlCache<V> {
  /** The live value for `key`, else what `load` resolves to (one load for concurrent callers). */
  get(key: string, load: () => Promise<V>): Promise<V>;
  /** Drops `key` when `stale` says its settled value is no longer good (always, without `stale`). */
  drop(key: string, stale?: (value: V) => boolean): void;
  readonly size: number;
}

interface Entry<V> {
  promise: Promise<V>;
  /** undefined while loading. */
  value?: { current: V };
  until: number;
}

const DEFAULT_MAX_ENTRIES = 10_000;

export function createTtlCache<V>(options: TtlCacheOptions<V>): TtlCache<V> {
  const entries = new Map<string, Entry<V>>();
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const now = options.now ?? Date.now;

  return {
    get(key, load) {
      const found = entries.get(key);
      if (found && (!found.value || found.until > now())) return found.promise;
      const entry: Entry<V> = { promise: load(), until: Infinity };
      entries.delete(key);
      entries.set(key, entry);
      if (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
      entry.promise.then(
        (value) => {
          entry.value = { current: value };
          entry.until = now() + options.ttlMs(value);
          if (!(entry.until > now()) && entries.get(key) === entry) entries.delete(key);
        },
        () => {
          if (entries.get(key) === entry) entries.delete(key);
        },
      );
      return entry.promise;
    },

    drop(key, stale) {
      const entry = entries.get(key);
      if (entry?.value && (!stale || stale(entry.value.current))) entries.delete(key);
    },

    get size() {
      return entries.size;
    },
  };
}
