import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { claimWithin, redisReplayStore, type ReplayStore } from './replay-store';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('claimWithin: only a boolean answered in time counts', () => {
  const store = (claimOnce: ReplayStore['claimOnce']): ReplayStore => ({ claimOnce });
  const later = Date.now() + 60_000;

  it('passes on a first claim and a replay', async () => {
    expect(
      await claimWithin(
        store(async () => true),
        'k',
        later,
        100,
      ),
    ).toBe(true);
    expect(
      await claimWithin(
        store(async () => false),
        'k',
        later,
        100,
      ),
    ).toBe(false);
  });

  it('is undefined when the store throws, hangs past the timeout, or answers anything else', async () => {
    expect(
      await claimWithin(
        store(async () => Promise.reject(new Error('down'))),
        'k',
        later,
        100,
      ),
    ).toBeUndefined();
    const started = Date.now();
    expect(
      await claimWithin(
        store(() => new Promise(() => undefined)),
        'k',
        later,
        50,
      ),
    ).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(2000);
    for (const odd of ['OK', 1, null, undefined, {}])
      expect(
        await claimWithin(
          store(async () => odd as unknown as boolean),
          'k',
          later,
          100,
        ),
      ).toBeUndefined();
  });
});

describe('redisReplayStore on a real Redis', () => {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0 });
  const prefix = `crawlgate-test:${randomUUID()}:`;
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('lets one claim of a key through, across stores sharing the Redis, until the key expires', async () => {
    const [one, other] = [redisReplayStore(redis, { prefix }), redisReplayStore(redis, { prefix })];
    // Long enough that a loaded machine's slow Redis round trips do not outlast it before the checks.
    const expires = Date.now() + 1_500;
    expect(await one.claimOnce('sig-1', expires)).toBe(true);
    expect(await other.claimOnce('sig-1', expires)).toBe(false);
    expect(await one.claimOnce('sig-2', expires)).toBe(true);
    const ttl = await redis.pttl(`${prefix}sig-1`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(1_500);
    // Waited out by Redis's own count: on a loaded machine the SET reaches it later than the TTL was
    // computed (the first command also opens the connection), and the key outlives `expires` by that.
    const left = await redis.pttl(`${prefix}sig-1`);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, left) + 100));
    expect(await other.claimOnce('sig-1', Date.now() + 300)).toBe(true);
  });

  it('claims concurrently once', async () => {
    const store = redisReplayStore(redis, { prefix });
    const answers = await Promise.all(Array.from({ length: 10 }, () => store.claimOnce('race', Date.now() + 5000)));
    expect(answers.filter(Boolean)).toHaveLength(1);
  });

  it('gives no answer when Redis is unreachable', async () => {
    const dead = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    try {
      expect(await claimWithin(redisReplayStore(dead, { prefix }), 'k', Date.now() + 5000, 500)).toBeUndefined();
    } finally {
      dead.disconnect();
    }
  });

  it('refuses a client without set()', () => {
    expect(() => redisReplayStore({} as never)).toThrow(TypeError);
  });
});
