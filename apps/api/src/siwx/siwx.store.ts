import { Inject, Injectable } from '@nestjs/common';
import type { Database } from '../db/database';
import { isUniqueViolation } from '../db/prisma-errors';
import { DATABASE } from '../db/tokens';
import type { Payment } from '../generated/prisma/client';

const PURGE_MARGIN_MS = 5 * 60_000;

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
   * expired nonce is refused before it gets here); the margin keeps an instance whose clock runs
   * ahead from deleting a row another instance still needs.
   */
  async spendNonce(nonce: string, siteId: string, expiresAt: Date, now: Date): Promise<boolean> {
    await this.db.prisma.siwxNonce.deleteMany({
      where: { expiresAt: { lt: new Date(now.getTime() - PURGE_MARGIN_MS) } },
    });
    try {
      await this.db.prisma.siwxNonce.create({ data: { nonce, siteId, expiresAt } });
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }
}
