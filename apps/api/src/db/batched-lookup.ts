import { whenIdle } from '../app/when-idle';

/** How many keys one statement looks up at most; more start another statement. */
export const MAX_BATCH = 100;

/**
 * A lookup by key for a hot path, made for many callers in one statement: the keys asked for
 * while the event loop works through the requests that have arrived are looked up together once
 * it has (setImmediate), so under load one database round trip serves many requests. Each key is
 * still looked up after its caller asked, so it sees everything committed before (a token rotated
 * a moment ago is refused); a failed statement fails every lookup in it, and nothing is cached.
 */
export function batchedLookup<K, V>(
  load: (keys: K[]) => Promise<Map<K, V>>,
  maxBatch = MAX_BATCH,
): (key: K) => Promise<V | undefined> {
  let waiting = new Map<K, Array<Settle<V>>>();

  const flush = () => {
    const batch = waiting;
    waiting = new Map();
    if (batch.size) void run(batch);
  };
  const flushWhenIdle = whenIdle(flush);

  const run = async (batch: Map<K, Array<Settle<V>>>) => {
    try {
      const found = await load([...batch.keys()]);
      for (const [key, callers] of batch) for (const caller of callers) caller.resolve(found.get(key));
    } catch (error) {
      for (const callers of batch.values()) for (const caller of callers) caller.reject(error);
    }
  };

  return (key) =>
    new Promise<V | undefined>((resolve, reject) => {
      const callers = waiting.get(key);
      if (callers) callers.push({ resolve, reject });
      else waiting.set(key, [{ resolve, reject }]);
      if (waiting.size >= maxBatch) flush();
      else flushWhenIdle();
    });
}

interface Settle<V> {
  resolve(value: V | undefined): void;
  reject(error: unknown): void;
}
