import { Inject, Injectable } from '@nestjs/common';
import { formatMicrosUsd, type SiteStats } from '@crawlgate/core';
import type { Database } from '../db/database';
import { DATABASE } from '../db/tokens';
import { Prisma, type Site } from '../generated/prisma/client';
import { formatConversion } from './conversion';
import type { DateRange } from './date-range';
import { PAID_SQL } from './paid-payments';
import { checksummed } from './payment-items';
import { toBigInt, toCount } from './sql-values';

const TOP = 10;

/** Paid payments summed by some key. */
interface Group {
  key: string;
  paidGates: number;
  revenue: bigint;
}

/*
 * Revenue counts confirmed payments by the UTC day they were confirmed; gates created come from
 * site_daily_counts, which outlive the gates themselves (purged after expiry).
 */
@Injectable()
export class SiteStatsService {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async stats(site: Site, range: DateRange): Promise<SiteStats> {
    const paid = Prisma.sql`site_id = ${site.id}::uuid AND ${PAID_SQL}
      AND confirmed_at >= ${range.start}::timestamptz AND confirmed_at < ${range.end}::timestamptz`;
    const byRevenue = (key: Prisma.Sql) =>
      Prisma.sql`ORDER BY SUM(amount) DESC, COUNT(*) DESC, ${key} ASC LIMIT ${TOP}`;
    const day = Prisma.sql`to_char(confirmed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`;
    const [paidByDay, topPaths, topAgents, uniqueAgents, createdByDay] = await Promise.all([
      this.groups(day, paid),
      this.groups(Prisma.sql`url`, paid, byRevenue(Prisma.sql`url`)),
      this.groups(Prisma.sql`payer`, paid, byRevenue(Prisma.sql`payer`)),
      this.db.prisma.$queryRaw<
        { count: unknown }[]
      >`SELECT COUNT(DISTINCT payer)::int AS count FROM payments WHERE ${paid}`,
      this.gatesCreatedByDay(site.id, range),
    ]);

    const paidOn = new Map(paidByDay.map((group) => [group.key, group]));
    const days = range.days.map((day) => ({
      day,
      revenue: paidOn.get(day)?.revenue ?? 0n,
      paidGates: paidOn.get(day)?.paidGates ?? 0,
      gatesCreated: createdByDay.get(day) ?? 0,
    }));
    const revenue = days.reduce((sum, d) => sum + d.revenue, 0n);
    const paidGates = days.reduce((sum, d) => sum + d.paidGates, 0);
    const gatesCreated = days.reduce((sum, d) => sum + d.gatesCreated, 0);
    return {
      site_id: site.id,
      from: range.from,
      to: range.to,
      revenue_usd: formatMicrosUsd(revenue),
      revenue_amount: revenue.toString(),
      paid_gates: paidGates,
      gates_created: gatesCreated,
      conversion: formatConversion(paidGates, gatesCreated),
      unique_agents: toCount(uniqueAgents[0]?.count),
      top_paths: topPaths.map((g) => ({
        url: g.key,
        paid_gates: g.paidGates,
        revenue_usd: formatMicrosUsd(g.revenue),
      })),
      top_agents: topAgents.map((g) => ({
        address: checksummed(g.key),
        paid_gates: g.paidGates,
        revenue_usd: formatMicrosUsd(g.revenue),
      })),
      by_day: days.map((d) => ({
        day: d.day,
        revenue_usd: formatMicrosUsd(d.revenue),
        paid_gates: d.paidGates,
        gates_created: d.gatesCreated,
      })),
    };
  }

  /** Sums are cast to text and counts to int in SQL, so neither driver hands back a float. */
  private async groups(key: Prisma.Sql, where: Prisma.Sql, tail: Prisma.Sql = Prisma.empty): Promise<Group[]> {
    const rows = await this.db.prisma.$queryRaw<{ key: string; paid_gates: unknown; revenue: unknown }[]>`
      SELECT ${key} AS key, COUNT(*)::int AS paid_gates, SUM(amount)::text AS revenue
      FROM payments WHERE ${where} GROUP BY ${key} ${tail}`;
    return rows.map((row) => ({ key: row.key, paidGates: toCount(row.paid_gates), revenue: toBigInt(row.revenue) }));
  }

  private async gatesCreatedByDay(siteId: string, range: DateRange): Promise<Map<string, number>> {
    const rows = await this.db.prisma.$queryRaw<{ day: string; gates_created: unknown }[]>`
      SELECT to_char(day, 'YYYY-MM-DD') AS day, gates_created
      FROM site_daily_counts WHERE site_id = ${siteId}::uuid AND day BETWEEN ${range.from}::date AND ${range.to}::date`;
    return new Map(rows.map((row) => [row.day, toCount(row.gates_created)]));
  }
}
