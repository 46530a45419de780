import {
  CRAWLER_ACTIONS,
  formatMicrosUsd,
  MAX_CRAWLERS_WITH_TOP_PATHS,
  MAX_UNLISTED_CRAWLERS_IN_VIEW,
  OTHER_CRAWLERS,
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

const busiestFirst = (a: CrawlerView, b: CrawlerView): number =>
  b.requests - a.requests || a.crawler.localeCompare(b.crawler);

/** A crawler's row while its counts are summed: its verified requests and revenue, before they are shown. */
type TallyView = CrawlerView & { verified: number; revenue: bigint };

/** `name`'s row in `crawlers`, added empty when it has none yet. */
function tallyOf(crawlers: Map<string, TallyView>, name: string, reportedCategory: string): TallyView {
  let view = crawlers.get(name);
  if (!view) {
    // The catalogue's category and operator (an older middleware may report another category:
    // Google-InspectionTool was a search engine before 2026-11-29); a name outside it has no operator.
    const known = knownCrawler(name);
    view = {
      crawler: name,
      category: known?.category ?? reportedCategory,
      operator: known?.operator ?? null,
      requests: 0,
      ...zeroActions(),
      revenue_usd: '0',
      verified_share: '0',
      top_paths: [],
      verified: 0,
      revenue: 0n,
    };
    crawlers.set(name, view);
  }
  return view;
}

/**
 * Names outside the catalogue beyond the MAX_UNLISTED_CRAWLERS_IN_VIEW busiest, summed into
 * OTHER_CRAWLERS (never verified: vouchedName). Each day keeps at most
 * MAX_UNLISTED_CRAWLERS_PER_SITE_DAY of them, but a range of a year may hold thousands.
 */
function foldQuietUnlisted(crawlers: Map<string, TallyView>): void {
  const unlisted = [...crawlers.values()].filter((view) => knownCrawler(view.crawler) === undefined).sort(busiestFirst);
  for (const quiet of unlisted.slice(MAX_UNLISTED_CRAWLERS_IN_VIEW)) {
    crawlers.delete(quiet.crawler);
    const other = tallyOf(crawlers, OTHER_CRAWLERS, OTHER_CRAWLERS);
    other.requests += quiet.requests;
    for (const action of CRAWLER_ACTIONS) other[action] += quiet[action];
    other.revenue += quiet.revenue;
  }
}

/** Who crawls a site: the middleware's reported counts, per crawler and per day, over a range. */
@Injectable()
export class CrawlersService {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /** `withPaths: false` (the CSV) reads no top paths. */
  async view(siteId: string, range: DateRange, { withPaths = true } = {}): Promise<SiteCrawlersView> {
    const [totals, days, confirmed] = await Promise.all([
      crawlerTotals(this.db.sql, siteId, range.from, range.to),
      crawlerDays(this.db.sql, siteId, range.from, range.to),
      siteRevenue(this.db.prisma, siteId, range),
    ]);
    const crawlers = new Map<string, TallyView>();
    for (const row of totals) {
      const view = tallyOf(crawlers, row.crawler, row.category);
      const requests = Number(row.requests);
      view.requests += requests;
      view[row.action] += requests;
      if (row.verified && vouchedName(row.crawler)) view.verified += requests;
      view.revenue += row.revenueMicros;
    }
    foldQuietUnlisted(crawlers);
    const listed = [...crawlers.values()].sort(busiestFirst);
    if (withPaths) {
      const busiest = listed.slice(0, MAX_CRAWLERS_WITH_TOP_PATHS).map((view) => view.crawler);
      for (const path of await crawlerTopPaths(this.db.sql, siteId, range.from, range.to, busiest))
        crawlers.get(path.crawler)?.top_paths.push({
          path: path.path,
          requests: Number(path.requests),
          verified: path.verified && vouchedName(path.crawler),
        });
    }
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
      crawlers: listed.map(({ verified, revenue, ...view }) => ({
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
