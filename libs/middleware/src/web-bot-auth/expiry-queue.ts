/*
 * Keys by expiry, soonest first (a binary min-heap): what expired is taken in time proportional to
 * what expired, never a walk of everything kept.
 */

export interface ExpiryQueue<K> {
  add(key: K, expiry: number): void;
  /** Removes and hands over, soonest first, every key whose expiry is at or before `at`. */
  takeExpired(at: number, take: (key: K, expiry: number) => void): void;
  readonly size: number;
}

export function createExpiryQueue<K>(): ExpiryQueue<K> {
  const keys: K[] = [];
  const expiries: number[] = [];

  function swap(i: number, j: number): void {
    [keys[i], keys[j]] = [keys[j], keys[i]];
    [expiries[i], expiries[j]] = [expiries[j], expiries[i]];
  }

  function siftUp(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (expiries[parent] <= expiries[i]) return;
      swap(i, parent);
      i = parent;
    }
  }

  function siftDown(i: number): void {
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let least = i;
      if (left < expiries.length && expiries[left] < expiries[least]) least = left;
      if (right < expiries.length && expiries[right] < expiries[least]) least = right;
      if (least === i) return;
      swap(i, least);
      i = least;
    }
  }

  return {
    add(key, expiry) {
      keys.push(key);
      expiries.push(expiry);
      siftUp(keys.length - 1);
    },
    takeExpired(at, take) {
      while (expiries.length > 0 && expiries[0] <= at) {
        const key = keys[0];
        const expiry = expiries[0];
        const lastKey = keys.pop()!;
        const lastExpiry = expiries.pop()!;
        if (keys.length > 0) {
          keys[0] = lastKey;
          expiries[0] = lastExpiry;
          siftDown(0);
        }
        take(key, expiry);
      }
    },
    get size() {
      return keys.length;
    },
  };
}
