import { Logger } from '@nestjs/common';
import { ThrottlerStorage, ThrottlerStorageService } from '@nestjs/throttler';
import Redis from 'ioredis';

type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/** The longest a request waits on Redis: a connected Redis that does not answer must not hold every throttled route. */
const COMMAND_TIMEOUT_MS = 500;
/** After a command timed out, requests count in this process this long before Redis is asked again. */
const STALL_BACKOFF_MS = 5_000;

// One round trip: count the hit, start the window on the first hit, block once over the limit.
const INCREMENT = `
local blocked = redis.call('PTTL', KEYS[2])
if blocked > 0 then return {tonumber(ARGV[2]) + 1, redis.call('PTTL', KEYS[1]), 1, blocked} end
local hits = redis.call('INCR', KEYS[1])
if hits == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local left = redis.call('PTTL', KEYS[1])
if hits > tonumber(ARGV[2]) then
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[3])
  return {hits, left, 1, tonumber(ARGV[3])}
end
return {hits, left, 0, 0}`;

/**
 * Rate-limit counters shared by every API instance through Redis. If Redis fails, limits fall back
 * to this process (logged once, and visible in /v1/health) rather than failing requests.
 */
export class RedisThrottlerStorage implements ThrottlerStorage {
  private readonly logger = new Logger('RateLimit');
  private readonly local = new ThrottlerStorageService();
  private degraded = false;
  /** Until when (ms) Redis is not asked, after a command timed out: each request would wait the timeout again. */
  private askAgainAt = 0;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /**
   * Connects before the first request is served. Commands never queue while Redis is away
   * (enableOfflineQueue off), and none waits more than COMMAND_TIMEOUT_MS on one that is connected
   * but silent, so an outage costs a fast fallback, not a stalled request.
   */
  static async connect(url: string, prefix: string): Promise<RedisThrottlerStorage> {
    const redis = new Redis(url, {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      connectTimeout: 2000,
      commandTimeout: COMMAND_TIMEOUT_MS,
    });
    let lastError: Error | undefined;
    redis.on('error', (error: Error) => (lastError = error)); // surfaced through increment() and status
    const storage = new RedisThrottlerStorage(redis, prefix);
    try {
      await redis.connect();
    } catch (error) {
      storage.markDegraded(error);
    }
    // Health follows the connection too, so a Redis lost or back while no request came is reported.
    redis.on('close', () => storage.closing || storage.markDegraded(lastError ?? new Error('connection closed')));
    redis.on('ready', () => storage.markRecovered());
    return storage;
  }

  private closing = false;

  private markDegraded(error: unknown): void {
    if (!this.degraded)
      this.logger.warn(`Redis unavailable, rate limits are per process until it returns: ${(error as Error).message}`);
    this.degraded = true;
  }

  private markRecovered(): void {
    if (this.degraded) this.logger.log('Redis is back: rate limits are shared again');
    this.degraded = false;
  }

  get status(): 'redis' | 'in-process-fallback' {
    return this.degraded ? 'in-process-fallback' : 'redis';
  }

  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    if (Date.now() < this.askAgainAt) return this.local.increment(key, ttl, limit, blockDuration, throttlerName);
    try {
      // The counter and the block flag in namespaces of their own: a flag named by suffix (key +
      // ":blocked") was another bucket's counter when a tracker ends in ":blocked" (an IP from
      // X-Forwarded-For, a gate id in the path), and one request then blocked that bucket.
      const scope = `${this.prefix}rl:${throttlerName}`;
      const [totalHits, left, blocked, blockLeft] = (await this.redis.eval(
        INCREMENT,
        2,
        `${scope}:hits:${key}`,
        `${scope}:blocked:${key}`,
        ttl,
        limit,
        blockDuration,
      )) as number[];
      this.markRecovered();
      return {
        totalHits,
        timeToExpire: seconds(left),
        isBlocked: blocked === 1,
        timeToBlockExpire: seconds(blockLeft),
      };
    } catch (error) {
      this.markDegraded(error);
      if ((error as Error).message === 'Command timed out') this.askAgainAt = Date.now() + STALL_BACKOFF_MS;
      return this.local.increment(key, ttl, limit, blockDuration, throttlerName);
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    this.local.onApplicationShutdown();
    this.redis.disconnect();
  }
}

const seconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000));
