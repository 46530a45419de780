import { Inject, Injectable } from '@nestjs/common';
import { formatMicrosUsd, type AgentProfile } from '@crawlgate/core';
import type { Database } from '../db/database';
import { DATABASE } from '../db/tokens';
import { PAID, PAID_SQL } from './paid-payments';
import { checksummed } from './payment-items';
import { toCount } from './sql-values';

@Injectable()
export class AgentsService {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /** Any address has a profile: one that never paid gets zeros, as nothing needs registering. */
  async profile(address: `0x${string}`): Promise<AgentProfile> {
    const [totals, [sites]] = await Promise.all([
      this.db.prisma.payment.aggregate({
        where: { payer: address, ...PAID },
        _count: { _all: true },
        _sum: { amount: true },
        _min: { confirmedAt: true },
        _max: { confirmedAt: true },
      }),
      // Prisma has no COUNT(DISTINCT); grouping would fetch one row per site.
      this.db.prisma.$queryRaw<
        { count: unknown }[]
      >`SELECT COUNT(DISTINCT site_id)::int AS count FROM payments WHERE payer = ${address} AND ${PAID_SQL}`,
    ]);
    const spent = totals._sum.amount ?? 0n;
    return {
      address: checksummed(address),
      payments_count: totals._count._all,
      total_spent_usd: formatMicrosUsd(spent),
      total_spent_amount: spent.toString(),
      first_payment_at: totals._min.confirmedAt?.toISOString() ?? null,
      last_payment_at: totals._max.confirmedAt?.toISOString() ?? null,
      sites_count: toCount(sites?.count),
    };
  }
}
