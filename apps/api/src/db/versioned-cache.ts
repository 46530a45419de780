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
  private readonly entries = new Map<string, Entry<T>>();
  private weighed = 0;

  /**
   * Beyond `maxEntries`, or once the values weigh more than `weighing.maxWeight`, the least recently
   * read keys go first; the key just read stays, even alone above the bound, and so does a load on
   * its way while a loaded value can go (it weighs nothing yet, and its waiters share it). Above the
   * weight, the older keys of an owner (`get`'s `owner`) holding more than half of it go first when
   * its key outgrew it, then the least recently read: one owner's heavy keys read in turn drop its
   * own, not everyone else's.
   */
  constructor(
    private readonly maxEntries: number,
    private readonly weighing?: Weighing<T>,
  ) {}

  /** What the loaded values weighed when last weighed (0 without `weighing`). */
  get weight(): number {
    return this.weighed;
  }

  get(key: string, version: number, load: () => Promise<T>, owner = ''): Promise<T> {
    const cached = this.entries.get(key);
    if (cached?.version === version) {
      // Read again: the newest in the order keys go in.
      this.entries.delete(key);
      this.entries.set(key, cached);
      return cached.value;
    }
    if (cached) this.drop(key, cached);
    const entry: Entry<T> = { version, value: load(), weight: 0, owner };
    this.entries.set(key, entry);
    if (this.entries.size > this.maxEntries) this.dropOldest(key);
    entry.value.then(
      (value) => {
        if (this.entries.get(key) !== entry) return;
        entry.loaded = { value };
        this.weigh(key, entry, value);
      },
      // A failed load is not kept: the next request tries again.
      () => {
        if (this.entries.get(key) === entry) this.drop(key, entry);
      },
    );
    return entry.value;
  }

  /** Weighs `key`'s value again: one that grew since its load (a site's prices build tables on first use). */
  weighAgain(key: string): void {
    const entry = this.entries.get(key);
    if (entry?.loaded) this.weigh(key, entry, entry.loaded.value);
  }

  private weigh(key: string, entry: Entry<T>, value: T): void {
    if (!this.weighing) return;
    const weight = this.weighing.weigh(value);
    this.weighed += weight - entry.weight;
    entry.weight = weight;
    const max = this.weighing.maxWeight;
    if (this.weighed > max && this.weightOf(entry.owner) > max / 2) this.dropOwnOlder(key, entry.owner, max);
    while (this.weighed > max && this.dropOldest(key, true));
  }

  /** What `owner`'s loaded values weigh together. */
  private weightOf(owner: string): number {
    let weight = 0;
    for (const entry of this.entries.values()) if (entry.owner === owner) weight += entry.weight;
    return weight;
  }

  /**
   * Drops `owner`'s loaded keys but `keep`, least recently read first, until the values fit: an owner
   * holding more than half the cache pays first for its own key's growth (one account's heavy sites
   * read in turn push out its own); otherwise the least recently read go, whoever's (a site read
   * lately stays, and an owner's own busy sites are not dropped before stale ones). One pass.
   */
  private dropOwnOlder(keep: string, owner: string, maxWeight: number): void {
    for (const [key, entry] of this.entries) {
      if (this.weighed <= maxWeight) return;
      if (key !== keep && entry.loaded && entry.owner === owner && entry.weight > 0) this.drop(key, entry);
    }
  }

  /** Drops the least recently read key but `keep` (a loaded one first, or only with `loadedOnly`); whether one went. */
  private dropOldest(keep: string, loadedOnly = false): boolean {
    let oldest: [string, Entry<T>] | undefined;
    for (const [key, entry] of this.entries) {
      if (key === keep) continue;
      if (entry.loaded) {
        oldest = [key, entry];
        break;
      }
      if (!loadedOnly) oldest ??= [key, entry];
    }
    if (oldest) this.drop(...oldest);
    return oldest !== undefined;
  }

  private drop(key: string, entry: Entry<T>): void {
    this.entries.delete(key);
    this.weighed -= entry.weight;
  }
}

/** How a cache weighs its values, and what they may weigh together. */
export interface Weighing<T> {
  weigh(value: T): number;
  maxWeight: number;
}

interface Entry<T> {
  version: number;
  value: Promise<T>;
  /** The value once loaded; what it weighed when last weighed. */
  loaded?: { value: T };
  weight: number;
  owner: string;
}
