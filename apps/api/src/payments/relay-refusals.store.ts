import { Inject, Injectable } from '@nestjs/common';
import type { Database } from '../db/database';
import { DATABASE } from '../db/tokens';

/** How long a payer whose relayed transaction reverted is not relayed again. */
export const RELAY_REFUSAL_MS = 24 * 3_600_000;

/**
 * Payers whose settlement or deposit, sent by our relayer, reverted on chain. A payer can make what
 * the relayer sends for it revert after every check passed (a contract wallet whose signature check
 * passes simulations only, an EOA moving its funds or setting code ahead of the relayer's
 * transaction), each revert at our gas and none of its own: once, then it is not relayed for
 * RELAY_REFUSAL_MS (it may still pay by a transfer of its own, a tx_hash proof).
 */
@Injectable()
export class RelayRefusalsStore {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async isRefused(chainId: number, payer: string): Promise<boolean> {
    const rows = await this.db.sql.query(
      'SELECT 1 FROM relay_refusals WHERE chain_id = $1::int AND payer = $2 AND refused_until > now()',
      [chainId, payer.toLowerCase()],
    );
    return rows.length > 0;
  }

  /** Refuses `payer` for RELAY_REFUSAL_MS from now, for the relayed transaction `txHash` that reverted. */
  async refuse(chainId: number, payer: string, txHash: string): Promise<void> {
    await this.db.sql.query(
      `INSERT INTO relay_refusals (chain_id, payer, refused_until, reverted_tx_hash)
       VALUES ($1::int, $2, now() + $3::bigint * interval '1 millisecond', $4)
       ON CONFLICT (chain_id, payer) DO UPDATE
         SET refused_until = GREATEST(relay_refusals.refused_until, excluded.refused_until),
             reverted_tx_hash = excluded.reverted_tx_hash`,
      [chainId, payer.toLowerCase(), RELAY_REFUSAL_MS, txHash.toLowerCase()],
    );
  }

  /** Deletes the refusals that are over; returns how many. */
  async deleteOver(): Promise<number> {
    const [row] = await this.db.sql.query<{ deleted: number | string }>(
      `WITH over AS (DELETE FROM relay_refusals WHERE refused_until <= now() RETURNING 1)
       SELECT count(*) AS deleted FROM over`,
    );
    return Number(row?.deleted ?? 0);
  }
}
