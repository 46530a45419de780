import { Prisma, type PrismaClient } from '../generated/prisma/client';
import type { DateRange } from './date-range';
import { PAID_SQL } from './paid-payments';
import { toBigInt, toCount } from './sql-values';

/** Whose payments a report covers: one site's, or every site of a publisher's. */
export type ReportScope = { siteId: string } | { publisherId: string };

/** Paid payments summed by some key. */
export interface PaidGroup {
  key: string;
  paidGates: number;
  revenue: bigint;
}

/** The sites of a scope, as a condition on site_id. */
export const scopeSites = (scope: ReportScope): Prisma.Sql =>
  'siteId' in scope
    ? Prisma.sql`site_id = ${scope.siteId}::uuid`
    : Prisma.sql`site_id IN (SELECT id FROM sites WHERE publisher_id = ${scope.publisherId}::uuid)`;

/** A scope's payments that count as revenue over a range: confirmed within its UTC days. */
export const paidWithin = (scope: ReportScope, range: DateRange): Prisma.Sql =>
  Prisma.sql`${scopeSites(scope)} AND ${PAID_SQL}
    AND confirmed_at >= ${range.start}::timestamptz AND confirmed_at < ${range.end}::timestamptz`;

/** The UTC day a payment was confirmed (YYYY-MM-DD): revenue's day. */
export const CONFIRMED_DAY = Prisma.sql`to_char(confirmed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`;

/** Paid payments matching `where`, summed by `key`. Sums are cast to text and counts to int in SQL, so neither driver hands back a float. */
export async function paidGroups(
  prisma: PrismaClient,
  key: Prisma.Sql,
  where: Prisma.Sql,
  tail: Prisma.Sql = Prisma.empty,
): Promise<PaidGroup[]> {
  const rows = await prisma.$queryRaw<{ key: string; paid_gates: unknown; revenue: unknown }[]>`
    SELECT ${key} AS key, COUNT(*)::int AS paid_gates, SUM(amount)::text AS revenue
    FROM payments WHERE ${where} GROUP BY ${key} ${tail}`;
  return rows.map((row) => ({ key: row.key, paidGates: toCount(row.paid_gates), revenue: toBigInt(row.revenue) }));
}

/** A site's revenue over a range (micro-USD) as its stats count it: its paid payments by the day confirmed, summed. */
export async function siteRevenue(prisma: PrismaClient, siteId: string, range: DateRange): Promise<bigint> {
  const days = await paidGroups(prisma, CONFIRMED_DAY, paidWithin({ siteId }, range));
  return days.reduce((sum, day) => sum + day.revenue, 0n);
}
