import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../config/config';
import type { Database } from '../db/database';
import { CONFIG, DATABASE } from '../db/tokens';

/**
 * Marks unpaid gates past their expiry as expired and purges them after the retention period.
 * Paid gates are kept. Both statements are idempotent, so any number of instances may run it.
 */
@Injectable()
export class GateSweeperService {
  constructor(
    @Inject(DATABASE) private readonly db: Database,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  async runOnce(now = new Date()): Promise<{ expired: number; purged: number }> {
    const expired = await this.db.prisma.gate.updateMany({ where: { status: 'open', expiresAt: { lte: now } }, data: { status: 'expired' } });
    const purgeBefore = new Date(now.getTime() - this.config.gateRetentionSeconds * 1000);
    const purged = await this.db.prisma.gate.deleteMany({ where: { status: 'expired', expiresAt: { lte: purgeBefore } } });
    return { expired: expired.count, purged: purged.count };
  }
}
