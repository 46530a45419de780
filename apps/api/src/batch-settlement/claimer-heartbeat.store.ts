import { Inject, Injectable } from '@nestjs/common';
import type { Database } from '../db/database';
import { DATABASE } from '../db/tokens';
import type { ClaimSigner } from './channel.store';

/** A receiver's claims in one token, as one escrow and claim authorizer make them. */
export type ClaimingReceiver = ClaimSigner & { receiver: string; token: string };

/** The last whole claimer run on this database, whichever instance made it. */
export interface ClaimerHeartbeat {
  /** Milliseconds since it finished, by the database's clock (every instance reads the same one). */
  ageMs: number;
  /** How often the instance that made it runs the claimer; 0: only when asked. */
  intervalMs: number;
}

/** The SQL of the claimer's heartbeat (job_heartbeats' row "claimer") and of its receivers' own reverts (receiver_claim_failures). */
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

  /**
   * The receiver's own claim or settle reverted in a run, on an instance that runs one every
   * `intervalMs`: failing since the first such run (a later one keeps that start).
   */
  async recordOwnRevert(of: ClaimingReceiver, intervalMs: number): Promise<void> {
    await this.db.sql.query(
      `INSERT INTO receiver_claim_failures (id, chain_id, escrow, receiver_authorizer, receiver, token, interval_ms)
       VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6)
       ON CONFLICT (chain_id, escrow, receiver_authorizer, receiver, token) DO UPDATE SET interval_ms = $6`,
      [...keyOf(of), intervalMs],
    );
  }

  /** A claim or settle of the receiver landed, or it has nothing left to send: it is not failing. */
  async recordCaughtUp(of: ClaimingReceiver): Promise<void> {
    await this.db.sql.query(`DELETE FROM receiver_claim_failures WHERE ${KEY_MATCHES}`, keyOf(of));
  }

  /**
   * The receivers (and tokens) whose own transactions revert under this escrow and authorizer, each
   * as a heartbeat of its last good run would read (ageMs: how long ago the reverts began).
   */
  async failures(signer: ClaimSigner): Promise<({ receiver: string; token: string } & ClaimerHeartbeat)[]> {
    const rows = await this.db.sql.query<{
      receiver: string;
      token: string;
      age_ms: number | string;
      interval_ms: number;
    }>(
      `SELECT receiver, token, EXTRACT(EPOCH FROM (now() - since)) * 1000 AS age_ms, interval_ms
         FROM receiver_claim_failures WHERE chain_id = $1 AND escrow = $2 AND receiver_authorizer = $3`,
      [signer.chainId, signer.escrow.toLowerCase(), signer.receiverAuthorizer.toLowerCase()],
    );
    return rows.map((row) => ({
      receiver: row.receiver,
      token: row.token,
      ageMs: Number(row.age_ms),
      intervalMs: row.interval_ms,
    }));
  }
}

const KEY_MATCHES = 'chain_id = $1 AND escrow = $2 AND receiver_authorizer = $3 AND receiver = $4 AND token = $5';

function keyOf(of: ClaimingReceiver): [number, string, string, string, string] {
  return [
    of.chainId,
    of.escrow.toLowerCase(),
    of.receiverAuthorizer.toLowerCase(),
    of.receiver.toLowerCase(),
    of.token.toLowerCase(),
  ];
}
