import { Inject, Injectable } from '@nestjs/common';
import type { Database } from '../db/database';
import { DATABASE } from '../db/tokens';
import type { ReceiverClaims } from './channel.store';

/** The last whole claimer run on this database, whichever instance made it. */
export interface ClaimerHeartbeat {
  /** Milliseconds since it finished, by the database's clock (every instance reads the same one). */
  ageMs: number;
  /** How often the instance that made it runs the claimer; 0: only when asked. */
  intervalMs: number;
}

/** The SQL of the claimer's heartbeat (job_heartbeats' row "claimer") and of its receivers' failures (claim_failures). */
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

  /** The receiver's claims failed in a run, on an instance that runs one every `intervalMs`: failing since the first such run. */
  async recordReceiverFailed(of: ReceiverClaims, intervalMs: number): Promise<void> {
    await this.db.sql.query(
      `INSERT INTO claim_failures (id, chain_id, receiver, token, interval_ms)
       VALUES (gen_random_uuid(), $1, $2, $3, $4)
       ON CONFLICT (chain_id, receiver, token) DO UPDATE SET interval_ms = $4`,
      [of.chainId, of.receiver.toLowerCase(), of.token.toLowerCase(), intervalMs],
    );
  }

  /** The receiver's claims went through in a run: it is not failing. */
  async recordReceiverClaimed(of: ReceiverClaims): Promise<void> {
    await this.db.sql.query('DELETE FROM claim_failures WHERE chain_id = $1 AND receiver = $2 AND token = $3', [
      of.chainId,
      of.receiver.toLowerCase(),
      of.token.toLowerCase(),
    ]);
  }

  /**
   * Since when the receiver's claims have failed, as a heartbeat of its last good run would read
   * (ageMs: how long ago the failures began); undefined while they do not.
   */
  async receiverFailure(of: ReceiverClaims): Promise<ClaimerHeartbeat | undefined> {
    const [row] = await this.db.sql.query<{ age_ms: number | string; interval_ms: number }>(
      `SELECT EXTRACT(EPOCH FROM (now() - since)) * 1000 AS age_ms, interval_ms
         FROM claim_failures WHERE chain_id = $1 AND receiver = $2 AND token = $3`,
      [of.chainId, of.receiver.toLowerCase(), of.token.toLowerCase()],
    );
    return row && { ageMs: Number(row.age_ms), intervalMs: row.interval_ms };
  }

  /** Receivers (and tokens) of this chain whose claims are failing: each run visits them, so one with nothing left to claim is cleared. */
  failingReceivers(chainId: number): Promise<{ receiver: string; token: string }[]> {
    return this.db.sql.query<{ receiver: string; token: string }>(
      'SELECT receiver, token FROM claim_failures WHERE chain_id = $1',
      [chainId],
    );
  }
}
