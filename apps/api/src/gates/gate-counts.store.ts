import type { SqlSession } from '../db/sql-driver';

export interface DayCount {
  /** UTC day, YYYY-MM-DD. */
  day: string;
  gates: number;
}

/** The largest value of the integer column: a day's count stops there rather than fail every later report. */
const MAX_INT = 2_147_483_647;

/** Adds gates offered to a site's daily counts, in one statement however many days (a day named twice is summed). */
export async function addGateCounts(sql: SqlSession, siteId: string, counts: readonly DayCount[]): Promise<void> {
  if (counts.length === 0) return;
  await sql.query(
    `INSERT INTO site_daily_counts (site_id, day, gates_created)
     SELECT $1::uuid, day::date, LEAST(SUM(gates), ${MAX_INT})::int
       FROM unnest($2::text[], $3::int[]) AS c(day, gates) GROUP BY day
     ON CONFLICT (site_id, day) DO UPDATE
       SET gates_created = LEAST(site_daily_counts.gates_created::bigint + EXCLUDED.gates_created, ${MAX_INT})::int`,
    [siteId, counts.map((c) => c.day), counts.map((c) => c.gates)],
  );
}
