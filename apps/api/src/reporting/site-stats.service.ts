import { Inject, Injectable } from '@nestjs/common';
import { formatMicrosUsd, type PublisherStats, type SiteStats } from '@crawlgate/core';
import type { Database } from '../db/database';
import { DATABASE } from '../db/tokens';
import { Prisma, type Site } from '../generated/prisma/client';
import { formatConversion } from './conversion';
import type { DateRange } from './date-range';
import { CONFIRMED_DAY, paidGroups, paidWithin, scopeSites, type ReportScope } from './paid-payments.store';
import { checksummed } from './payment-items';
import { toCount } from './sql-values';

const TOP = 10;

/*
 * Revenue counts confirmed payments by the UTC day they were confirmed; gates created come from
 * site_daily_counts, which outlive the gates themselves (purged after expiry). A publisher's
 * report is counted over all its sites at once: its top lists and distinct payers are exact,
 * not each site's added up.
 */
@Injectable()
export class SiteStatsService {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async stats(site: Site, range: DateRange): Promise<SiteStats> {
    const { top_paths, ...report } = await this.report({ siteId: site.id }, range);
    return { site_id: site.id, ...report, top_paths: top_paths.map(({ site_id: _, ...path }) => path) };
  }

  publisherStats(publisherId: string, range: DateRange): Promise<PublisherStats> {
    return this.report({ publisherId }, range);
  }

  private async report(scope: ReportScope, range: DateRange): Promise<PublisherStats> {
    const sites = scopeSites(scope);
    const paid = paidWithin(scope, range);
    const byRevenue = (key: Prisma.Sql) =>
      Prisma.sql`ORDER BY SUM(amount) DESC, COUNT(*) DESC, ${key} ASC LIMIT ${TOP}`;
    // A path is a site's: the key joins both (a uuid's text never holds a space).
    const sitePath = Prisma.sql`site_id::text || ' ' || url`;
    const prisma = this.db.prisma;
    const [paidByDay, topPaths, topAgents, uniqueAgents, createdByDay] = await Promise.all([
      paidGroups(prisma, CONFIRMED_DAY, paid),
      paidGroups(prisma, sitePath, paid, byRevenue(sitePath)),
      paidGroups(prisma, Prisma.sql`payer`, paid, byRevenue(Prisma.sql`payer`)),
      this.db.prisma.$queryRaw<
        { count: unknown }[]
      >`SELECT COUNT(DISTINCT payer)::int AS count FROM payments WHERE ${paid}`,
      this.gatesCreatedByDay(sites, range),
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
      from: range.from,
      to: range.to,
      revenue_usd: formatMicrosUsd(revenue),
      revenue_amount: revenue.toString(),
      paid_gates: paidGates,
      gates_created: gatesCreated,
      conversion: formatConversion(paidGates, gatesCreated),
      unique_agents: toCount(uniqueAgents[0]?.count),
      top_paths: topPaths.map((g) => {
        const space = g.key.indexOf(' ');
        return {
          site_id: g.key.slice(0, space),
          url: g.key.slice(space + 1),
          paid_gates: g.paidGates,
          revenue_usd: formatMicrosUsd(g.revenue),
        };
      }),
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

  private async gatesCreatedByDay(sites: Prisma.Sql, range: DateRange): Promise<Map<string, number>> {
    const rows = await this.db.prisma.$queryRaw<{ day: string; gates_created: unknown }[]>`
      SELECT to_char(day, 'YYYY-MM-DD') AS day, SUM(gates_created)::text AS gates_created
      FROM site_daily_counts WHERE ${sites} AND day BETWEEN ${range.from}::date AND ${range.to}::date
      GROUP BY day`;
    return new Map(rows.map((row) => [row.day, toCount(row.gates_created)]));
  }
}
