import { Inject, Injectable } from '@nestjs/common';
import { sha256Hex } from '@crawlgate/core';
import type { Database } from '../db/database';
import { DATABASE } from '../db/tokens';
import type { Prisma } from '../generated/prisma/client';

/** How long a network an account logged in from stays known without another login from it. */
export const KNOWN_NETWORK_MS = 30 * 24 * 3_600_000;

/**
 * The networks each account logged in from with its password. A login from one is counted for that
 * network only (PublishersService.login): strangers guessing from many networks, who block every
 * other login to the account, do not lock its owner out. Keys are stored hashed, as the counters'.
 */
@Injectable()
export class KnownNetworksStore {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async isKnown(account: string, network: string): Promise<boolean> {
    const rows = await this.db.sql.query(
      'SELECT 1 FROM known_login_networks WHERE key_hash = $1 AND expires_at > now()',
      [keyOf(account, network)],
    );
    return rows.length > 0;
  }

  /**
   * Known for KNOWN_NETWORK_MS from now, while the publisher's password is still `passwordHash`, the
   * one just checked: a login racing a password change must not leave the old password's network known.
   * Written by `tx`, the transaction of the login's other writes (its key), so that none stands alone.
   */
  async remember(
    tx: Prisma.TransactionClient,
    account: string,
    network: string,
    { publisherId, passwordHash }: { publisherId: string; passwordHash: string },
  ): Promise<void> {
    await tx.$executeRaw`
      INSERT INTO known_login_networks (key_hash, account_hash, expires_at)
      SELECT ${keyOf(account, network)}, ${sha256Hex(account)}, now() + ${KNOWN_NETWORK_MS}::bigint * interval '1 millisecond'
       WHERE EXISTS (SELECT 1 FROM publishers WHERE id = ${publisherId}::uuid AND password_hash = ${passwordHash})
      ON CONFLICT (key_hash) DO UPDATE SET expires_at = excluded.expires_at`;
  }

  /** Forgets every network of `account`, within `tx`: whoever logged in with its old password is a stranger again. */
  async forget(tx: Prisma.TransactionClient, account: string): Promise<void> {
    await tx.$executeRaw`DELETE FROM known_login_networks WHERE account_hash = ${sha256Hex(account)}`;
  }

  /** Deletes the rows that expired; returns how many. */
  async deleteExpired(): Promise<number> {
    const [row] = await this.db.sql.query<{ deleted: number | string }>(
      `WITH over AS (DELETE FROM known_login_networks WHERE expires_at <= now() RETURNING 1)
       SELECT count(*) AS deleted FROM over`,
    );
    return Number(row?.deleted ?? 0);
  }
}

function keyOf(account: string, network: string): string {
  return sha256Hex(`${account}\n${network}`);
}
