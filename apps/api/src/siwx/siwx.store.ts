import { Inject, Injectable } from '@nestjs/common';
import { ACCESS_TOKEN_CLOCK_SKEW_SECONDS } from '@crawlgate/core';
import type { Database } from '../db/database';
import { isUniqueViolation } from '../db/prisma-errors';
import { DATABASE } from '../db/tokens';
import type { Payment } from '../generated/prisma/client';

/** The SQL of sign-in-with-x: which payment a wallet may read again, and which nonces are spent. */
@Injectable()
export class SiwxStore {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /** The confirmed payment of `payer` (lower-case) for exactly `path` on the site whose token lives longest past `now`. */
  async livePayment(siteId: string, payer: string, path: string, now: Date): Promise<Payment | null> {
    return this.db.prisma.payment.findFirst({
      where: { siteId, payer, url: path, status: 'confirmed', tokenExpiresAt: { gt: now } },
      orderBy: { tokenExpiresAt: 'desc' },
    });
  }

  /**
   * Marks a nonce answered; false when it already was (a replay). The unique key decides, so two
   * concurrent proofs with one nonce cannot both pass. Rows of nonces expired a while go first (an
   * expired nonce is refused before it gets here), by the database's clock, the one every instance
   * shares: an instance whose clock runs ahead deletes no row another still needs. The margin is
   * the clocks' allowed skew, as a nonce may be read that much past its expiry by a clock behind.
   */
  async spendNonce(nonce: string, siteId: string, expiresAt: Date): Promise<boolean> {
    await this.db.prisma.$executeRaw`
      DELETE FROM siwx_nonces WHERE expires_at < now() - ${ACCESS_TOKEN_CLOCK_SKEW_SECONDS} * interval '1 second'`;
    try {
      await this.db.prisma.siwxNonce.create({ data: { nonce, siteId, expiresAt } });
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }
}
