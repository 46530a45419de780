/*
 * Replay protection across the servers of a site. The nonce memory (nonce-memory.ts) is one
 * process's: a signed request replayed to another server of the same site would verify there
 * again. A ReplayStore that all of them share (Redis) records each accepted signature once. It is
 * asked after the local memory, only for a signature that verified, and a store that fails or is
 * late leaves the request unverified: never verified on a guess.
 */

export interface ReplayStore {
  /**
   * Records `key` until `expiresAtMs` (unix ms) unless it is recorded already: true for the first
   * claim, false for every later one while the key is kept. Atomic across the servers sharing it.
   */
  claimOnce(key: string, expiresAtMs: number): Promise<boolean>;
}

/** The one call redisReplayStore makes, as ioredis spells it: SET key value PX ms NX. */
export interface RedisSetClient {
  set(key: string, value: string, px: 'PX', milliseconds: number, nx: 'NX'): Promise<string | null>;
}

export interface RedisReplayStoreOptions {
  /** Prefix of the keys written; default "crawlgate:web-bot-auth:". */
  prefix?: string;
  now?: () => number;
}

/** A ReplayStore on Redis through an ioredis client (node-redis: wrap its set in this shape). */
export function redisReplayStore(client: RedisSetClient, options: RedisReplayStoreOptions = {}): ReplayStore {
  if (typeof client?.set !== 'function') throw new TypeError('redisReplayStore: a Redis client with set() is required');
  const prefix = options.prefix ?? 'crawlgate:web-bot-auth:';
  const now = options.now ?? Date.now;
  return {
    async claimOnce(key, expiresAtMs) {
      const ttl = Math.max(1, Math.ceil(expiresAtMs - now()));
      return (await client.set(prefix + key, '1', 'PX', ttl, 'NX')) === 'OK';
    },
  };
}

/**
 * The store's answer within `timeoutMs`: true for the first claim, false for a replay, undefined
 * when the store failed, was late or answered anything but a boolean.
 */
export async function claimWithin(
  store: ReplayStore,
  key: string,
  expiresAtMs: number,
  timeoutMs: number,
): Promise<boolean | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, timeoutMs, undefined);
  });
  try {
    const answer = await Promise.race([store.claimOnce(key, expiresAtMs), late]);
    return typeof answer === 'boolean' ? answer : undefined;
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}
