import {
  CRAWLER_ACTIONS,
  MAX_UNLISTED_CRAWLERS_PER_SITE_DAY,
  MAX_TOP_PATHS_PER_CRAWLER,
  MAX_TOP_PATHS_PER_SITE_DAY,
  OTHER_CRAWLERS,
  type CrawlerAction,
  type CrawlerCount,
  type CrawlerPathCount,
} from '@crawlgate/core';
import type { SqlSession } from '../db/sql-driver';
import { knownCrawler } from './reported-names';

/**
 * Distinct from every other advisory lock: (SITE_REPORT_LOCK, hash of the site id). Held to the end
 * of a report's transaction; two-key locks never meet the one-key locks of the migrator and the reconciler.
 */
const SITE_REPORT_LOCK = 0x63676372; // 'cgcr'

/** The largest value of a bigint column: totals stop there rather than fail the report. */
const MAX_BIGINT = '9223372036854775807';

/**
 * A report's entries with each crawler outside the catalogue and the groups (reported-names.ts)
 * that the site's day does not hold yet, beyond the first MAX_UNLISTED_CRAWLERS_PER_SITE_DAY of
 * that day, renamed OTHER_CRAWLERS (its counts and paths kept). Known names are always kept.
 * Run inside the report's transaction: it takes the site's report lock first, so a report written
 * at the same time reads the names this one adds, and the two never pass the cap together.
 */
export async function foldCrawlersOverCap<C extends CrawlerCount, P extends CrawlerPathCount>(
  sql: SqlSession,
  siteId: string,
  counts: readonly C[],
  paths: readonly P[],
): Promise<{ counts: C[]; paths: P[] }> {
  const days = [...new Set([...counts, ...paths].map((entry) => entry.day))];
  if (days.length === 0) return { counts: [], paths: [] };
  await sql.query('SELECT pg_advisory_xact_lock($1::int, hashtext($2))', [SITE_REPORT_LOCK, siteId]);
  const held = await sql.query<{ day: string; crawler: string }>(
    `SELECT DISTINCT to_char(day, 'YYYY-MM-DD') AS day, crawler FROM crawler_daily_counts
      WHERE site_id = $1::uuid AND day = ANY($2::date[])`,
    [siteId, days],
  );
  const kept = new Map(days.map((day) => [day, new Set<string>()]));
  for (const row of held) if (!knownCrawler(row.crawler)) kept.get(row.day)?.add(row.crawler);
  const admits = (day: string, crawler: string) => {
    const names = kept.get(day)!;
    if (knownCrawler(crawler) || names.has(crawler)) return true;
    if (names.size >= MAX_UNLISTED_CRAWLERS_PER_SITE_DAY) return false;
    names.add(crawler);
    return true;
  };
  return {
    counts: counts.map((count) =>
      admits(count.day, count.crawler)
        ? count
        : { ...count, crawler: OTHER_CRAWLERS, category: OTHER_CRAWLERS, operator: null },
    ),
    // A path's crawler was admitted with its counts, or never counted: either way not a new name.
    paths: paths.map((path) =>
      knownCrawler(path.crawler) || kept.get(path.day)!.has(path.crawler) ? path : { ...path, crawler: OTHER_CRAWLERS },
    ),
  };
}

/**
 * Adds a report's crawler counts to the site's daily aggregates, in one statement however many
 * entries (entries naming the same day, crawler, action and verification are summed; the latest
 * category and operator win). Totals stop at bigint's largest value.
 */
export async function addCrawlerCounts(
  sql: SqlSession,
  siteId: string,
  counts: readonly CrawlerCount[],
): Promise<void> {
  if (counts.length === 0) return;
  await sql.query(
    `INSERT INTO crawler_daily_counts (site_id, day, crawler, action, verified, category, operator, requests, revenue_micros)
     SELECT $1::uuid, day::date, crawler, action, verified, MAX(category), MAX(operator),
            LEAST(SUM(requests), ${MAX_BIGINT})::bigint, LEAST(SUM(revenue), ${MAX_BIGINT})::bigint
       FROM unnest($2::text[], $3::text[], $4::text[], $5::boolean[], $6::text[], $7::text[], $8::bigint[], $9::bigint[])
         AS c(day, crawler, action, verified, category, operator, requests, revenue)
      GROUP BY day, crawler, action, verified
     ON CONFLICT (site_id, day, crawler, action, verified) DO UPDATE SET
       category = EXCLUDED.category,
       operator = EXCLUDED.operator,
       requests = LEAST(crawler_daily_counts.requests::numeric + EXCLUDED.requests, ${MAX_BIGINT})::bigint,
       revenue_micros = LEAST(crawler_daily_counts.revenue_micros::numeric + EXCLUDED.revenue_micros, ${MAX_BIGINT})::bigint`,
    [
      siteId,
      counts.map((c) => c.day),
      counts.map((c) => c.crawler),
      counts.map((c) => c.action),
      counts.map((c) => c.verified),
      counts.map((c) => c.category),
      counts.map((c) => c.operator),
      counts.map((c) => c.requests),
      counts.map((c) => c.revenue_micros),
    ],
  );
}

/**
 * Adds a report's path counts, then keeps only each crawler's top paths of the days reported, its
 * verified ones and the others apart, and of those the site's busiest, verified first, so the table
 * stays bounded whatever paths and crawlers a report names, and strangers claiming a crawler's name
 * (their 402s cost them nothing) never push out the paths it was verified on.
 */
export async function addCrawlerPaths(
  sql: SqlSession,
  siteId: string,
  paths: readonly CrawlerPathCount[],
): Promise<void> {
  if (paths.length === 0) return;
  const days = [...new Set(paths.map((p) => p.day))];
  await sql.query(
    `INSERT INTO crawler_daily_paths (site_id, day, crawler, verified, path, requests)
     SELECT $1::uuid, day::date, crawler, verified, path, LEAST(SUM(requests), ${MAX_BIGINT})::bigint
       FROM unnest($2::text[], $3::text[], $4::boolean[], $5::text[], $6::bigint[]) AS p(day, crawler, verified, path, requests)
      GROUP BY day, crawler, verified, path
     ON CONFLICT (site_id, day, crawler, verified, path) DO UPDATE
       SET requests = LEAST(crawler_daily_paths.requests::numeric + EXCLUDED.requests, ${MAX_BIGINT})::bigint`,
    [
      siteId,
      paths.map((p) => p.day),
      paths.map((p) => p.crawler),
      paths.map((p) => p.verified === true),
      paths.map((p) => p.path),
      paths.map((p) => p.requests),
    ],
  );
  // Each crawler's top paths, verified and not apart, then the busiest of those for the whole site
  // and day, verified first.
  await sql.query(
    `DELETE FROM crawler_daily_paths d
      USING (SELECT day, crawler, verified, path, crawler_rank,
                    ROW_NUMBER() OVER (PARTITION BY day, crawler_rank <= $3
                                       ORDER BY verified DESC, requests DESC, crawler, path) AS site_rank
               FROM (SELECT day, crawler, verified, path, requests,
                            ROW_NUMBER() OVER (PARTITION BY day, crawler, verified ORDER BY requests DESC, path) AS crawler_rank
                       FROM crawler_daily_paths WHERE site_id = $1::uuid AND day = ANY($2::date[])) per_crawler) ranked
      WHERE d.site_id = $1::uuid AND d.day = ranked.day AND d.crawler = ranked.crawler
        AND d.verified = ranked.verified AND d.path = ranked.path
        AND (ranked.crawler_rank > $3 OR ranked.site_rank > $4)`,
    [siteId, days, MAX_TOP_PATHS_PER_CRAWLER, MAX_TOP_PATHS_PER_SITE_DAY],
  );
}

export interface CrawlerTotals {
  crawler: string;
  category: string;
  action: CrawlerAction;
  verified: boolean;
  requests: bigint;
  revenueMicros: bigint;
}

/**
 * A site's counts over whole UTC days [from, to], summed per crawler, action and verification. The
 * operator a report claimed is left out: the view shows the catalogue's (reported-names.ts).
 */
export async function crawlerTotals(
  sql: SqlSession,
  siteId: string,
  from: string,
  to: string,
): Promise<CrawlerTotals[]> {
  const rows = await sql.query<{
    crawler: string;
    category: string;
    action: string;
    verified: boolean;
    requests: string;
    revenue: string;
  }>(
    `SELECT crawler, MAX(category) AS category, action, verified,
            SUM(requests)::text AS requests, SUM(revenue_micros)::text AS revenue
       FROM crawler_daily_counts WHERE site_id = $1::uuid AND day BETWEEN $2::date AND $3::date
      GROUP BY crawler, action, verified`,
    [siteId, from, to],
  );
  return rows
    .filter((row): row is typeof row & { action: CrawlerAction } =>
      (CRAWLER_ACTIONS as readonly string[]).includes(row.action),
    )
    .map((row) => ({ ...row, requests: BigInt(row.requests), revenueMicros: BigInt(row.revenue) }));
}

/** Requests per day and action over every crawler, for the days of the range that have any. */
export async function crawlerDays(
  sql: SqlSession,
  siteId: string,
  from: string,
  to: string,
): Promise<{ day: string; action: string; requests: bigint }[]> {
  const rows = await sql.query<{ day: string; action: string; requests: string }>(
    `SELECT to_char(day, 'YYYY-MM-DD') AS day, action, SUM(requests)::text AS requests
       FROM crawler_daily_counts WHERE site_id = $1::uuid AND day BETWEEN $2::date AND $3::date
      GROUP BY day, action`,
    [siteId, from, to],
  );
  return rows.map((row) => ({ ...row, requests: BigInt(row.requests) }));
}

/**
 * The top paths over the range of each of `crawlers`, at most MAX_TOP_PATHS_PER_CRAWLER each: those
 * it was verified on first, then the others, each by requests.
 */
export async function crawlerTopPaths(
  sql: SqlSession,
  siteId: string,
  from: string,
  to: string,
  crawlers: readonly string[],
): Promise<{ crawler: string; path: string; verified: boolean; requests: bigint }[]> {
  const rows = await sql.query<{ crawler: string; path: string; verified: boolean; requests: string }>(
    `SELECT crawler, path, verified, requests::text FROM (
       SELECT crawler, path, verified, SUM(requests) AS requests,
              ROW_NUMBER() OVER (PARTITION BY crawler ORDER BY verified DESC, SUM(requests) DESC, path) AS rank
         FROM crawler_daily_paths
        WHERE site_id = $1::uuid AND day BETWEEN $2::date AND $3::date AND crawler = ANY($5::text[])
        GROUP BY crawler, verified, path) ranked
      WHERE rank <= $4 ORDER BY crawler, rank`,
    [siteId, from, to, MAX_TOP_PATHS_PER_CRAWLER, crawlers],
  );
  return rows.map((row) => ({ ...row, requests: BigInt(row.requests) }));
}

/**
 * Deletes the counts and top paths of `siteIds` for the days before `before` (YYYY-MM-DD): the rows
 * the tables' (site_id, day, …) keys find. The number of rows deleted.
 */
export async function deleteCrawlerDaysBefore(
  sql: SqlSession,
  siteIds: readonly string[],
  before: string,
): Promise<number> {
  const [{ deleted }] = await sql.query<{ deleted: number }>(
    `WITH counts AS (DELETE FROM crawler_daily_counts WHERE site_id = ANY($1::uuid[]) AND day < $2::date RETURNING 1),
          paths AS (DELETE FROM crawler_daily_paths WHERE site_id = ANY($1::uuid[]) AND day < $2::date RETURNING 1)
     SELECT ((SELECT count(*) FROM counts) + (SELECT count(*) FROM paths))::int AS deleted`,
    [siteIds, before],
  );
  return deleted;
}
