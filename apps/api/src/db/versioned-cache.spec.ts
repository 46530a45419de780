import { VersionedCache } from './versioned-cache';

/** A load that counts its calls and answers when told to. */
function deferredLoads<T>() {
  const pending: { resolve(value: T): void; reject(error: Error): void }[] = [];
  const load = () =>
    new Promise<T>((resolve, reject) => {
      pending.push({ resolve, reject });
    });
  return { load, pending };
}

describe('VersionedCache', () => {
  it('shares one load between the requests that miss at once', async () => {
    const cache = new VersionedCache<string>(10);
    const { load, pending } = deferredLoads<string>();
    const answers = [cache.get('site', 1, load), cache.get('site', 1, load), cache.get('site', 1, load)];
    expect(pending).toHaveLength(1);
    pending[0].resolve('rules v1');
    await expect(Promise.all(answers)).resolves.toEqual(['rules v1', 'rules v1', 'rules v1']);
    await expect(cache.get('site', 1, load)).resolves.toBe('rules v1');
    expect(pending).toHaveLength(1);
  });

  it('loads again for another version, and keeps the newest load', async () => {
    const cache = new VersionedCache<string>(10);
    const { load, pending } = deferredLoads<string>();
    const first = cache.get('site', 1, load);
    pending[0].resolve('v1');
    await first;
    const second = cache.get('site', 2, load);
    expect(pending).toHaveLength(2);
    pending[1].resolve('v2');
    await expect(second).resolves.toBe('v2');
    await expect(cache.get('site', 2, load)).resolves.toBe('v2');
    expect(pending).toHaveLength(2);
  });

  it('keeps keys apart', async () => {
    const cache = new VersionedCache<string>(10);
    const { load, pending } = deferredLoads<string>();
    const a = cache.get('a', 1, load);
    const b = cache.get('b', 1, load);
    expect(pending).toHaveLength(2);
    pending[0].resolve('A');
    pending[1].resolve('B');
    await expect(Promise.all([a, b])).resolves.toEqual(['A', 'B']);
  });

  it('does not keep a failed load: the next request loads again', async () => {
    const cache = new VersionedCache<string>(10);
    const { load, pending } = deferredLoads<string>();
    const failed = cache.get('site', 1, load);
    pending[0].reject(new Error('connection lost'));
    await expect(failed).rejects.toThrow('connection lost');
    const retried = cache.get('site', 1, load);
    expect(pending).toHaveLength(2);
    pending[1].resolve('v1');
    await expect(retried).resolves.toBe('v1');
  });

  it('drops the least recently read key beyond its bound', async () => {
    const cache = new VersionedCache<string>(2);
    let loads = 0;
    const load = async () => `load ${++loads}`;
    await cache.get('a', 1, load);
    await cache.get('b', 1, load);
    await cache.get('c', 1, load);
    expect(loads).toBe(3);
    await cache.get('b', 1, load);
    await cache.get('c', 1, load);
    expect(loads).toBe(3);
    await expect(cache.get('a', 1, load)).resolves.toBe('load 4');
  });
});

describe('VersionedCache weighed', () => {
  /** A value whose weight the test sets, as a site's price table grows when keyed tables are built on it. */
  const valued = (name: string, weight: number) => ({ name, weight });
  /** Values of up to 100 together, in at most `maxEntries` keys. */
  const weighed = (maxEntries = 10) =>
    new VersionedCache<{ name: string; weight: number }>(maxEntries, {
      maxWeight: 100,
      weigh: (value) => value.weight,
    });

  it('drops the least recently read keys once its values weigh more than its bound, never the one just read', async () => {
    const cache = weighed();
    const loads: string[] = [];
    const load = (name: string, weight: number) => async () => (loads.push(name), valued(name, weight));
    await cache.get('a', 1, load('a', 40));
    await cache.get('b', 1, load('b', 40));
    expect(cache.weight).toBe(80);
    await cache.get('c', 1, load('c', 40)); // 120: a goes
    expect(cache.weight).toBe(80);
    await cache.get('b', 1, load('b', 40));
    await cache.get('c', 1, load('c', 40));
    expect(loads).toEqual(['a', 'b', 'c']);
    await cache.get('a', 1, load('a', 40)); // reloaded: b goes
    expect(loads).toEqual(['a', 'b', 'c', 'a']);
    const huge = await cache.get('huge', 1, load('huge', 500)); // alone above the bound: kept, the rest dropped
    expect(huge.name).toBe('huge');
    expect(cache.weight).toBe(500);
    await cache.get('huge', 1, load('huge', 500));
    expect(loads).toEqual(['a', 'b', 'c', 'a', 'huge']);
  });

  it('weighs a value again when told: one that grew since its load drops older keys', async () => {
    const cache = weighed();
    const grows = valued('grows', 10);
    await cache.get('old', 1, async () => valued('old', 50));
    await cache.get('grows', 1, async () => grows);
    expect(cache.weight).toBe(60);
    grows.weight = 80;
    cache.weighAgain('grows');
    expect(cache.weight).toBe(80);
    cache.weighAgain('gone'); // a key it no longer holds: nothing to weigh
    expect(cache.weight).toBe(80);
    let reloaded = false;
    await cache.get('old', 1, async () => ((reloaded = true), valued('old', 50)));
    expect(reloaded).toBe(true);
  });

  it('keeps the key read most recently: two heavy keys read in turn do not drop a busy light one', async () => {
    const cache = weighed();
    const loads: string[] = [];
    const load = (name: string, weight: number) => async () => (loads.push(name), valued(name, weight));
    await cache.get('light', 1, load('light', 5));
    for (let round = 0; round < 3; round++) {
      await cache.get('heavy a', 1, load('heavy a', 60));
      await cache.get('light', 1, load('light', 5));
      await cache.get('heavy b', 1, load('heavy b', 60));
      await cache.get('light', 1, load('light', 5));
    }
    expect(loads.filter((name) => name === 'light')).toEqual(['light']);
  });

  it('never drops a key whose load is on its way: it weighs nothing yet, and its waiters share it', async () => {
    const cache = weighed();
    const { load, pending } = deferredLoads<{ name: string; weight: number }>();
    const slow = cache.get('slow', 1, load);
    await cache.get('b', 1, async () => valued('b', 60));
    await cache.get('c', 1, async () => valued('c', 60)); // above the bound: b goes, not slow
    expect(cache.get('slow', 1, load)).toBe(slow);
    expect(pending).toHaveLength(1);
    pending[0].resolve(valued('slow', 10));
    await expect(slow).resolves.toMatchObject({ name: 'slow' });
    expect(cache.weight).toBe(70);
  });

  it('counts a replaced version’s weight once, and a failed load’s not at all', async () => {
    const cache = weighed();
    await cache.get('site', 1, async () => valued('v1', 30));
    await cache.get('site', 2, async () => valued('v2', 20));
    expect(cache.weight).toBe(20);
    await expect(cache.get('other', 1, () => Promise.reject(new Error('connection lost')))).rejects.toThrow();
    expect(cache.weight).toBe(20);
  });

  it('keeps a key read lately whoever owns it: the heaviest owner’s busy key stays while others’ load in turn', async () => {
    // Dropping the heaviest owner's keys first, whatever was read lately, compiled such a busy site
    // again on nearly every read (88 times in 90 rounds), on its publisher's budget.
    const cache = weighed(100);
    const loads: string[] = [];
    const load = (name: string, weight: number) => async () => (loads.push(name), valued(name, weight));
    // Small sites of many publishers, read long ago (each below any fair share): what a cache holds.
    for (let i = 0; i < 10; i++) await cache.get(`small ${i}`, 1, load(`small ${i}`, 4), `small owner ${i}`);
    for (let round = 0; round < 5; round++)
      for (const owner of ['a', 'b', 'c']) {
        await cache.get('busy', 1, load('busy', 36), 'heaviest');
        await cache.get(owner, 1, load(owner, 31), owner);
      }
    expect(loads.filter((name) => name === 'busy')).toEqual(['busy']);
    expect(cache.weight).toBeLessThanOrEqual(100);
  });

  it('keeps an owner’s own busy keys over others’ stale ones while it holds little of the cache', async () => {
    // Dropping the owner's own older keys first, always, recompiled a publisher's two sites read in
    // turn on every read while a hundred stale sites of others stayed.
    const cache = weighed(1_000);
    const loads: string[] = [];
    const load = (name: string, weight: number) => async () => (loads.push(name), valued(name, weight));
    for (let i = 0; i < 100; i++) await cache.get(`stale ${i}`, 1, load(`stale ${i}`, 1), `owner ${i}`);
    for (let round = 0; round < 20; round++)
      for (const name of ['one', 'two']) await cache.get(name, 1, load(name, 5), 'publisher');
    expect(loads.filter((name) => !name.startsWith('stale'))).toEqual(['one', 'two']);
  });

  it('drops the older keys of the owner whose key outgrew the cache first: one owner’s heavy keys read in turn drop its own, not another’s', async () => {
    const cache = weighed();
    const loads: string[] = [];
    const load = (name: string, weight: number) => async () => (loads.push(name), valued(name, weight));
    await cache.get('victim a', 1, load('victim a', 20), 'victim');
    await cache.get('victim b', 1, load('victim b', 20), 'victim');
    for (let round = 0; round < 3; round++)
      for (const name of ['heavy 1', 'heavy 2', 'heavy 3']) await cache.get(name, 1, load(name, 30), 'attacker');
    expect(cache.weight).toBeLessThanOrEqual(100);
    await cache.get('victim a', 1, load('victim a', 20), 'victim');
    await cache.get('victim b', 1, load('victim b', 20), 'victim');
    expect(loads.filter((name) => name.startsWith('victim'))).toEqual(['victim a', 'victim b']);
    // An owner above the others loses its own least recently read key, even when another's is older.
    await cache.get('victim c', 1, load('victim c', 50), 'victim'); // victim 90, attacker 60 at most
    expect(cache.weight).toBeLessThanOrEqual(100);
    await cache.get('victim c', 1, load('victim c', 50), 'victim');
    await cache.get('victim a', 1, load('victim a', 20), 'victim');
    expect(loads.filter((name) => name.startsWith('victim'))).toEqual(['victim a', 'victim b', 'victim c', 'victim a']);
  });
});
