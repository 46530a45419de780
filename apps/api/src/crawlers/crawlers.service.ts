import {
  CRAWLER_ACTIONS,
  formatMicrosUsd,
  type CrawlerAction,
  type CrawlerDayView,
  type CrawlerView,
  type SiteCrawlersView,
} from '@crawlgate/core';
import { Inject, Injectable } from '@nestjs/common';
import type { Database } from '../db/database';
import { DATABASE } from '../db/tokens';
import { formatConversion } from '../reporting/conversion';
import type { DateRange } from '../reporting/date-range';
import { siteRevenue } from '../reporting/paid-payments.store';
import { crawlerDays, crawlerTopPaths, crawlerTotals } from './crawler-counts.store';
import { knownCrawler, vouchedName } from './reported-names';

/**
 * A crawler's reported revenue, scaled down by confirmed / reported when every crawler's together
 * comes to more than the site's confirmed payments over the same days: whoever holds the site token
 * can report any revenue, and the page shows none that no payment backs. Integer micro-USD, bigint
 * arithmetic rounded down, so the crawlers' total never exceeds the confirmed money.
 */
function backedRevenue(reported: bigint, reportedTotal: bigint, confirmed: bigint): bigint {
  return reportedTotal <= confirmed ? reported : (reported * confirmed) / reportedTotal;
}

const zeroActions = (): Record<CrawlerAction, number> =>
  Object.fromEntries(CRAWLER_ACTIONS.map((action) => [action, 0])) as Record<CrawlerAction, number>;

/** Who crawls a site: the middleware's reported counts, per crawler and per day, over a range. */
@Injectable()
export class CrawlersService {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async view(siteId: string, range: DateRange): Promise<SiteCrawlersView> {
    const [totals, days, paths, confirmed] = await Promise.all([
      crawlerTotals(this.db.sql, siteId, range.from, range.to),
      crawlerDays(this.db.sql, siteId, range.from, range.to),
      crawlerTopPaths(this.db.sql, siteId, range.from, range.to),
      siteRevenue(this.db.prisma, siteId, range),
    ]);
    const crawlers = new Map<string, CrawlerView & { verified: number; revenue: bigint }>();
    for (const row of totals) {
      let view = crawlers.get(row.crawler);
      if (!view) {
        // The catalogue's category and operator (an older middleware may report another category:
        // Google-InspectionTool was a search engine before 2026-11-29); a name outside it has no operator.
        const known = knownCrawler(row.crawler);
        view = {
          crawler: row.crawler,
          category: known?.category ?? row.category,
          operator: known?.operator ?? null,
          requests: 0,
          ...zeroActions(),
          revenue_usd: '0',
          verified_share: '0',
          top_paths: [],
          verified: 0,
          revenue: 0n,
        };
        crawlers.set(row.crawler, view);
      }
      const requests = Number(row.requests);
      view.requests += requests;
      view[row.action] += requests;
      if (row.verified && vouchedName(row.crawler)) view.verified += requests;
      view.revenue += row.revenueMicros;
    }
    for (const path of paths)
      crawlers.get(path.crawler)?.top_paths.push({
        path: path.path,
        requests: Number(path.requests),
        verified: path.verified && vouchedName(path.crawler),
      });
    const reportedRevenue = [...crawlers.values()].reduce((sum, view) => sum + view.revenue, 0n);

    const byDay = new Map<string, CrawlerDayView>(range.days.map((day) => [day, { day, ...zeroActions() }]));
    for (const row of days) {
      const day = byDay.get(row.day);
      if (day && (CRAWLER_ACTIONS as readonly string[]).includes(row.action))
        day[row.action as CrawlerAction] += Number(row.requests);
    }
    return {
      site_id: siteId,
      from: range.from,
      to: range.to,
      crawlers: [...crawlers.values()]
        .sort((a, b) => b.requests - a.requests || a.crawler.localeCompare(b.crawler))
        .map(({ verified, revenue, ...view }) => ({
          ...view,
          revenue_usd: formatMicrosUsd(backedRevenue(revenue, reportedRevenue, confirmed)),
          verified_share: formatConversion(verified, view.requests),
        })),
      days: [...byDay.values()],
    };
  }
}

const CSV_COLUMNS = [
  'crawler',
  'category',
  'operator',
  'requests',
  ...CRAWLER_ACTIONS,
  'revenue_usd',
  'verified_share',
] as const;

/** The crawlers of a view as CSV (RFC 4180, CRLF), one row per crawler; top paths are left to the JSON. */
export function crawlersCsv(view: SiteCrawlersView): string {
  const rows = view.crawlers.map((crawler) => CSV_COLUMNS.map((column) => csvField(crawler[column])));
  return [CSV_COLUMNS.join(','), ...rows.map((row) => row.join(','))].join('\r\n') + '\r\n';
}

/** Quoted when it holds a comma, quote or line break; a leading =, +, - or @ is defused for spreadsheets. */
function csvField(value: string | number | null): string {
  let text = value === null ? '' : String(value);
  if (/^[=+\-@\t\r]/.test(text) && typeof value === 'string') text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
