import { Inject, Injectable } from '@nestjs/common';
import { formatMicrosUsd, type PublisherStats, type SiteStats } from '@crawlgate/core';
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

/** Whose payments and gate counts a report covers: one site's, or every site of a publisher's. */
type Scope = { siteId: string } | { publisherId: string };

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

  private async report(scope: Scope, range: DateRange): Promise<PublisherStats> {
    const sites =
      'siteId' in scope
        ? Prisma.sql`site_id = ${scope.siteId}::uuid`
        : Prisma.sql`site_id IN (SELECT id FROM sites WHERE publisher_id = ${scope.publisherId}::uuid)`;
    const paid = Prisma.sql`${sites} AND ${PAID_SQL}
      AND confirmed_at >= ${range.start}::timestamptz AND confirmed_at < ${range.end}::timestamptz`;
    const byRevenue = (key: Prisma.Sql) =>
      Prisma.sql`ORDER BY SUM(amount) DESC, COUNT(*) DESC, ${key} ASC LIMIT ${TOP}`;
    const day = Prisma.sql`to_char(confirmed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`;
    // A path is a site's: the key joins both (a uuid's text never holds a space).
    const sitePath = Prisma.sql`site_id::text || ' ' || url`;
    const [paidByDay, topPaths, topAgents, uniqueAgents, createdByDay] = await Promise.all([
      this.groups(day, paid),
      this.groups(sitePath, paid, byRevenue(sitePath)),
      this.groups(Prisma.sql`payer`, paid, byRevenue(Prisma.sql`payer`)),
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

  /** Sums are cast to text and counts to int in SQL, so neither driver hands back a float. */
  private async groups(key: Prisma.Sql, where: Prisma.Sql, tail: Prisma.Sql = Prisma.empty): Promise<Group[]> {
    const rows = await this.db.prisma.$queryRaw<{ key: string; paid_gates: unknown; revenue: unknown }[]>`
      SELECT ${key} AS key, COUNT(*)::int AS paid_gates, SUM(amount)::text AS revenue
      FROM payments WHERE ${where} GROUP BY ${key} ${tail}`;
    return rows.map((row) => ({ key: row.key, paidGates: toCount(row.paid_gates), revenue: toBigInt(row.revenue) }));
  }

  private async gatesCreatedByDay(sites: Prisma.Sql, range: DateRange): Promise<Map<string, number>> {
    const rows = await this.db.prisma.$queryRaw<{ day: string; gates_created: unknown }[]>`
      SELECT to_char(day, 'YYYY-MM-DD') AS day, SUM(gates_created)::text AS gates_created
      FROM site_daily_counts WHERE ${sites} AND day BETWEEN ${range.from}::date AND ${range.to}::date
      GROUP BY day`;
    return new Map(rows.map((row) => [row.day, toCount(row.gates_created)]));
  }
}
