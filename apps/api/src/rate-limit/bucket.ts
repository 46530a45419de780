import type { ThrottlerStorage } from '@nestjs/throttler';
import { ApiError } from '../http/api-error';

/**
 * One more from the bucket `key` of `budget`, for limits a service counts itself (those only some
 * requests of a route spend, such as checks the chain must make); 429 with Retry-After once spent.
 * `detail` says what was counted.
 */
export async function spendFromBucket(
  storage: ThrottlerStorage,
  key: string,
  { limit, ttl }: { limit: number; ttl: number },
  detail: string,
): Promise<void> {
  const hits = await storage.increment(key, ttl, limit, ttl, 'default');
  if (hits.isBlocked) throw new ApiError(429, detail, {}, { 'retry-after': String(hits.timeToBlockExpire) });
}
