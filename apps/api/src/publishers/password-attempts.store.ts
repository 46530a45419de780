import { Inject, Injectable } from '@nestjs/common';
import { sha256Hex } from '@crawlgate/core';
import type { Database } from '../db/database';
import { DATABASE } from '../db/tokens';

/** A counter's budget: `limit` attempts per `ttl` ms, then blocked for `ttl` ms. */
export interface AttemptBudget {
  limit: number;
  ttl: number;
}

export type AttemptCount = { blocked: false } | { blocked: true; retryAfterSeconds: number };

interface AttemptRow {
  blocked: boolean | null;
  retry_after: number | string | null;
}

/**
 * Password attempts (logins, password confirmations) counted in the database: one row per counter,
 * shared by every instance and kept through restarts and Redis outages, so the budget against
 * guessing a password does not grow with the instances nor reset with Redis. One statement counts
 * and judges an attempt, under the row's lock, so attempts sent at once cannot outrun the count.
 */
@Injectable()
export class PasswordAttemptsStore {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /** Counts one attempt against `key` (hashed here); blocked once over the budget, for `ttl` ms. */
  async spend(key: string, { limit, ttl }: AttemptBudget): Promise<AttemptCount> {
    // Every SET reads the row as it was; a block, while it lasts, freezes the counter.
    const [row] = await this.db.sql.query<AttemptRow>(
      `INSERT INTO password_attempts AS a (key_hash, hits, window_ends)
       VALUES ($1, 1, now() + $2::int * interval '1 millisecond')
       ON CONFLICT (key_hash) DO UPDATE SET
         hits = CASE WHEN a.blocked_until > now() THEN a.hits
                     WHEN a.window_ends <= now() THEN 1
                     ELSE a.hits + 1 END,
         window_ends = CASE WHEN a.blocked_until > now() OR a.window_ends > now() THEN a.window_ends
                            ELSE excluded.window_ends END,
         blocked_until = CASE WHEN a.blocked_until > now() THEN a.blocked_until
                              WHEN a.window_ends > now() AND a.hits + 1 > $3::int
                                THEN now() + $2::int * interval '1 millisecond'
                              ELSE NULL END
       RETURNING blocked_until > now() AS blocked,
                 CEIL(EXTRACT(EPOCH FROM (blocked_until - now()))) AS retry_after`,
      [sha256Hex(key), ttl, limit],
    );
    return countOf(row);
  }

  /** Whether `key`'s counter is blocked now, counting nothing. */
  async check(key: string): Promise<AttemptCount> {
    const [row] = await this.db.sql.query<AttemptRow>(
      `SELECT blocked_until > now() AS blocked, CEIL(EXTRACT(EPOCH FROM (blocked_until - now()))) AS retry_after
         FROM password_attempts WHERE key_hash = $1`,
      [sha256Hex(key)],
    );
    return countOf(row);
  }

  /** Ends `key`'s counter and its block, if any. */
  async forget(key: string): Promise<void> {
    await this.db.sql.query('DELETE FROM password_attempts WHERE key_hash = $1', [sha256Hex(key)]);
  }

  /** Deletes the counters whose window and block are both over; returns how many. */
  async deleteOver(): Promise<number> {
    const [row] = await this.db.sql.query<{ deleted: number | string }>(
      `WITH over AS (
         DELETE FROM password_attempts
          WHERE window_ends <= now() AND (blocked_until IS NULL OR blocked_until <= now())
          RETURNING 1)
       SELECT count(*) AS deleted FROM over`,
    );
    return Number(row?.deleted ?? 0);
  }
}

function countOf(row: AttemptRow | undefined): AttemptCount {
  if (!row?.blocked) return { blocked: false };
  return { blocked: true, retryAfterSeconds: Math.max(1, Number(row.retry_after)) };
}
