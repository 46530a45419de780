import { Inject, Injectable } from '@nestjs/common';
import type { Database } from '../db/database';
import type { SqlSession } from '../db/sql-driver';
import { DATABASE } from '../db/tokens';

/**
 * Distinct from every other advisory lock: (PAYOUT_ADDRESS_LOCK, hash of the lowercase address).
 * Held to the end of a naming's transaction, so two publishers naming one address at once are
 * judged one after the other; two-key locks never meet the one-key locks of the migrator and jobs.
 */
const PAYOUT_ADDRESS_LOCK = 0x63677061; // 'cgpa'

export interface PayoutNaming {
  publisherId: string;
  /** The password hash the change was confirmed with: written only while it still stands. */
  passwordHash: string;
  /** EIP-55 checksummed; null clears it. */
  address: string | null;
  /** Whether the address signed for this publisher (its proof was checked before). */
  proven: boolean;
  /** A new name written in the same statement, when the request changes it too. */
  name?: string | null;
}

/** 'taken': another publisher names the address and this naming has no proof. */
export type PayoutNamingOutcome = 'named' | 'taken' | 'password-changed';

/**
 * The SQL of publishers' payout addresses. An address is named by one publisher, unless each
 * publisher naming it proved it (payout_address_proven): a proof takes it from the others.
 */
@Injectable()
export class PayoutAddressStore {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async name(naming: PayoutNaming): Promise<PayoutNamingOutcome> {
    try {
      return await this.db.sql.transaction(async (tx) => {
        if (naming.address !== null) {
          const address = naming.address.toLowerCase();
          await tx.query('SELECT pg_advisory_xact_lock($1::int, hashtext($2))', [PAYOUT_ADDRESS_LOCK, address]);
          if (naming.proven) {
            await lockRowsInIdOrder(tx, address, naming.publisherId);
            await dropUnprovenNamings(tx, address, naming.publisherId);
          } else if (await namedByAnother(tx, address, naming.publisherId)) return 'taken';
        }
        const written = await tx.query(
          `UPDATE publishers
              SET payout_address = $3::text,
                  -- Naming the address it holds again, without a proof, keeps the proof it had.
                  payout_address_proven = $4::boolean
                    OR COALESCE(lower(payout_address) = lower($3::text) AND payout_address_proven, false),
                  name = CASE WHEN $5::boolean THEN $6::text ELSE name END,
                  updated_at = now()
            WHERE id = $1::uuid AND password_hash = $2
        RETURNING id`,
          [
            naming.publisherId,
            naming.passwordHash,
            naming.address,
            naming.proven,
            naming.name !== undefined,
            naming.name ?? null,
          ],
        );
        // Undoes what this naming took from others too.
        if (written.length === 0) throw new PasswordChanged();
        await recordSpan(tx, naming.publisherId, naming.address);
        return 'named';
      });
    } catch (error) {
      if (error instanceof PasswordChanged) return 'password-changed';
      throw error;
    }
  }

  /**
   * Whether `address` was the publisher's payout address throughout the second of chain time
   * `atSeconds` (a block's): named by its end, and not replaced before the next one began. A
   * change within that second counts against it: the block may have come after the change. Its
   * end is stored to the millisecond, rounded: one stored at the next second may have been before it.
   */
  async wasPayoutAt(publisherId: string, address: string, atSeconds: bigint): Promise<boolean> {
    const [row] = await this.db.sql.query<{ was: boolean }>(
      `SELECT EXISTS (
         SELECT 1 FROM payout_address_spans
          WHERE publisher_id = $1::uuid AND address = lower($2::text)
            AND from_at < to_timestamp($3::bigint + 1)
            AND (until_at IS NULL OR until_at > to_timestamp($3::bigint + 1))) AS was`,
      [publisherId, address, atSeconds.toString()],
    );
    return row.was;
  }
}

class PasswordChanged extends Error {}

/**
 * Whether a publisher other than `publisherId` names `address` (lowercase), one `publisherId` does
 * not name already (naming its own address again changes nothing).
 */
async function namedByAnother(tx: SqlSession, address: string, publisherId: string): Promise<boolean> {
  const [row] = await tx.query<{ taken: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM publishers WHERE lower(payout_address) = $1 AND id <> $2::uuid)
        AND NOT EXISTS (SELECT 1 FROM publishers WHERE lower(payout_address) = $1 AND id = $2::uuid) AS taken`,
    [address, publisherId],
  );
  return row.taken;
}

/**
 * Locks, in id order, the rows a proven naming writes: its own and those of the publishers it takes
 * `address` (lowercase) from. Two proofs each taking the other's address would otherwise lock the
 * same two rows in opposite orders, and PostgreSQL would end one of them as a deadlock. The set is
 * fixed while the address's advisory lock is held: no one else names the address meanwhile.
 */
async function lockRowsInIdOrder(tx: SqlSession, address: string, publisherId: string): Promise<void> {
  await tx.query(
    `SELECT id FROM publishers
      WHERE id = $2::uuid OR (lower(payout_address) = $1 AND NOT payout_address_proven)
      ORDER BY id FOR UPDATE`,
    [address, publisherId],
  );
}

/** Takes `address` (lowercase) from every other publisher that named it without a proof, ending its span for each. */
async function dropUnprovenNamings(tx: SqlSession, address: string, publisherId: string): Promise<void> {
  await tx.query(
    `WITH dropped AS (
       UPDATE publishers SET payout_address = NULL, payout_address_proven = false, updated_at = now()
        WHERE lower(payout_address) = $1 AND id <> $2::uuid AND NOT payout_address_proven
        RETURNING id)
     UPDATE payout_address_spans SET until_at = now()
      WHERE until_at IS NULL AND publisher_id IN (SELECT id FROM dropped)`,
    [address, publisherId],
  );
}

/**
 * The publisher's payout address is now `address`: the span of the one before ends, unless it is
 * the same, and one starts for the new one (none for no address).
 */
async function recordSpan(tx: SqlSession, publisherId: string, address: string | null): Promise<void> {
  await tx.query(
    `UPDATE payout_address_spans SET until_at = now()
      WHERE publisher_id = $1::uuid AND until_at IS NULL AND address IS DISTINCT FROM lower($2::text)`,
    [publisherId, address],
  );
  if (address === null) return;
  await tx.query(
    `INSERT INTO payout_address_spans (id, publisher_id, address)
     SELECT gen_random_uuid(), $1::uuid, lower($2::text)
      WHERE NOT EXISTS (SELECT 1 FROM payout_address_spans WHERE publisher_id = $1::uuid AND until_at IS NULL)`,
    [publisherId, address],
  );
}
