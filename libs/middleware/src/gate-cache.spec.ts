import { createTtlCache } from './gate-cache';

describe('createTtlCache', () => {
  let now = 0;
  const cache = (ttlMs = 1000, maxEntries?: number) => createTtlCache<string>({ ttlMs: () => ttlMs, maxEntries, now: () => now });
  beforeEach(() => (now = 0));

  it('keeps a value for its time to live, then loads again', async () => {
    const c = cache();
    let loads = 0;
    const load = async () => `v${++loads}`;
    expect(await c.get('k', load)).toBe('v1');
    now = 999;
    expect(await c.get('k', load)).toBe('v1');
    now = 1000;
    expect(await c.get('k', load)).toBe('v2');
  });

  it('runs one load for concurrent callers and keeps no failure', async () => {
    const c = cache();
    let fail = true;
    const load = jest.fn(() => new Promise<string>((resolve, reject) => setTimeout(() => (fail ? reject(new Error('down')) : resolve('up')), 5)));
    const both = [c.get('k', load), c.get('k', load)];
    await expect(Promise.all(both)).rejects.toThrow('down');
    expect(load).toHaveBeenCalledTimes(1);
    fail = false;
    expect(await c.get('k', load)).toBe('up');
    expect(c.size).toBe(1);
  });

  it('keeps nothing whose time to live is not positive', async () => {
    const c = cache(0);
    await c.get('k', async () => 'v');
    expect(c.size).toBe(0);
  });

  it('drops a settled entry on demand, only when it is stale', async () => {
    const c = cache();
    await c.get('k', async () => 'paid-gate');
    c.drop('k', (v) => v === 'other-gate');
    expect(c.size).toBe(1);
    c.drop('k', (v) => v === 'paid-gate');
    expect(c.size).toBe(0);
  });

  it('forgets the oldest entries beyond its size', async () => {
    const c = cache(1000, 2);
    for (const k of ['a', 'b', 'c']) await c.get(k, async () => k);
    expect(c.size).toBe(2);
    const load = jest.fn(async () => 'again');
    expect(await c.get('a', load)).toBe('again');
    expect(await c.get('c', load)).toBe('c');
  });
});
