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

  it('drops the least recently loaded key beyond its bound', async () => {
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
