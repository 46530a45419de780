import { Inject, Injectable } from '@nestjs/common';
import type { ChainContext } from '../chain/chain-context';
import { CHAIN } from '../chain/tokens';
import type { Database } from '../db/database';
import { DATABASE } from '../db/tokens';

/**
 * The last whole claimer run on this database, whichever instance made it: it read the escrow's
 * withdrawals, visited every receiver with a payer withdrawing or a voucher half its withdraw delay
 * old, and the others its time allowed (ClaimerService.pastBudget), without a failure.
 */
export interface ClaimerHeartbeat {
  /** Milliseconds since it finished, by the database's clock (every instance reads the same one). */
  ageMs: number;
  /** How often the instance that made it runs the claimer; 0: only when asked. */
  intervalMs: number;
}

/**
 * The SQL of the claimer's heartbeat: a job_heartbeats row per chain, escrow and claim authorizer.
 * A claimer claims only the channels of its escrow naming its key, so a run under another key (an
 * instance not yet moved to a new CLAIM_AUTHORIZER_PRIVATE_KEY, say) says nothing of this one's vouchers.
 */
@Injectable()
export class ClaimerHeartbeatStore {
  private readonly job: string;

  constructor(
    @Inject(DATABASE) private readonly db: Database,
    @Inject(CHAIN) chain: ChainContext,
  ) {
    const batch = chain.batchSettlement;
    this.job = batch ? `claimer/${chain.chainId}/${batch.escrow}/${batch.authorizer.address}`.toLowerCase() : 'claimer';
  }

  /** A claimer run finished whole now, on an instance that runs one every `intervalMs` (0: only when asked). */
  async record(intervalMs: number): Promise<void> {
    await this.db.sql.query(
      `INSERT INTO job_heartbeats (job, completed_at, interval_ms) VALUES ($1, now(), $2)
       ON CONFLICT (job) DO UPDATE SET completed_at = now(), interval_ms = $2`,
      [this.job, intervalMs],
    );
  }

  /** The last whole run; undefined when no claimer with this escrow and key ever finished one here. */
  async last(): Promise<ClaimerHeartbeat | undefined> {
    const [row] = await this.db.sql.query<{ age_ms: number | string; interval_ms: number }>(
      `SELECT EXTRACT(EPOCH FROM (now() - completed_at)) * 1000 AS age_ms, interval_ms
         FROM job_heartbeats WHERE job = $1`,
      [this.job],
    );
    return row && { ageMs: Number(row.age_ms), intervalMs: row.interval_ms };
  }
}
