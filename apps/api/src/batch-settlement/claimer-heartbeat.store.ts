import { Inject, Injectable } from '@nestjs/common';
import type { Database } from '../db/database';
import { DATABASE } from '../db/tokens';

/** The last whole claimer run on this database, whichever instance made it. */
export interface ClaimerHeartbeat {
  /** Milliseconds since it finished, by the database's clock (every instance reads the same one). */
  ageMs: number;
  /** How often the instance that made it runs the claimer; 0: only when asked. */
  intervalMs: number;
}

/** The SQL of the claimer's heartbeat (job_heartbeats' row "claimer"). */
@Injectable()
export class ClaimerHeartbeatStore {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /** A claimer run finished whole now, on an instance that runs one every `intervalMs` (0: only when asked). */
  async record(intervalMs: number): Promise<void> {
    await this.db.sql.query(
      `INSERT INTO job_heartbeats (job, completed_at, interval_ms) VALUES ('claimer', now(), $1)
       ON CONFLICT (job) DO UPDATE SET completed_at = now(), interval_ms = $1`,
      [intervalMs],
    );
  }

  /** The last whole run; undefined when no claimer ever finished one here. */
  async last(): Promise<ClaimerHeartbeat | undefined> {
    const [row] = await this.db.sql.query<{ age_ms: number | string; interval_ms: number }>(
      `SELECT EXTRACT(EPOCH FROM (now() - completed_at)) * 1000 AS age_ms, interval_ms
         FROM job_heartbeats WHERE job = 'claimer'`,
    );
    return row && { ageMs: Number(row.age_ms), intervalMs: row.interval_ms };
  }
}
