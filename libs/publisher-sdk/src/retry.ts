/*
 * When to try a call again. A 429 was refused before any work was done, so it is retried for
 * every method, after the server's Retry-After. A network failure may have happened after the
 * server acted, so only GETs (idempotent) are retried. Timeouts are never retried: timeoutMs is
 * the caller's bound on how long one call may hang.
 */

export interface RetryPolicy {
  maxRetries: number;
  /** Longest single wait; a Retry-After beyond it fails at once (waiting less would only earn another 429). */
  maxWaitMs: number;
}

export type Failure = { kind: 'rate-limited'; retryAfterSeconds?: number } | { kind: 'network' };

/** Milliseconds to wait before retry number `attempt` (0-based), or null to give up. */
export function retryDelay(policy: RetryPolicy, failure: Failure, method: string, attempt: number): number | null {
  if (attempt >= policy.maxRetries) return null;
  if (failure.kind === 'network') return method === 'GET' ? Math.min(250 * 2 ** attempt, policy.maxWaitMs) : null;
  const wait = failure.retryAfterSeconds === undefined ? 1000 * 2 ** attempt : failure.retryAfterSeconds * 1000;
  return wait <= policy.maxWaitMs ? wait : null;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
