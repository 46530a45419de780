import type { CrawlerAction, CrawlerDayView, CrawlerView, SiteCrawlersView } from '@crawlgate/publisher';
import { usdToMicros } from './money';

/** The middleware's outcomes in the order the table and the chart show them, with their labels. */
export const ACTIONS: readonly { action: CrawlerAction; label: string; color: string }[] = [
  { action: 'passed', label: 'Passed', color: '#6b7280' },
  { action: 'allowed', label: 'Allowed', color: '#16a34a' },
  { action: 'blocked', label: 'Blocked', color: '#dc2626' },
  { action: 'charged', label: '402', color: '#d97706' },
  { action: 'paid', label: 'Paid', color: '#2563eb' },
  { action: 'token', label: 'Token reuse', color: '#7c3aed' },
];

/** One row of the crawlers table: the API's view with revenue in micro-USD and the share as a number. */
export interface CrawlerRow {
  crawler: string;
  category: string;
  operator: string | null;
  requests: number;
  counts: Record<CrawlerAction, number>;
  revenue: bigint;
  /** Verified requests ÷ requests, in 0..1. */
  verifiedShare: number;
  topPaths: CrawlerView['top_paths'];
}

export function crawlerRows(view: Pick<SiteCrawlersView, 'crawlers'>): CrawlerRow[] {
  return view.crawlers.map((crawler) => ({
    crawler: crawler.crawler,
    category: crawler.category,
    operator: crawler.operator,
    requests: crawler.requests,
    counts: Object.fromEntries(ACTIONS.map(({ action }) => [action, crawler[action]])) as Record<CrawlerAction, number>,
    revenue: usdToMicros(crawler.revenue_usd),
    verifiedShare: Number(crawler.verified_share),
    topPaths: crawler.top_paths,
  }));
}

/** Requests of every day of the range, all actions together; what tells an empty range from a quiet one. */
export function totalRequests(days: readonly CrawlerDayView[]): number {
  return days.reduce((sum, day) => sum + ACTIONS.reduce((daySum, { action }) => daySum + day[action], 0), 0);
}

/** "crawlers-news.example.com-2026-11-01-2026-11-30.csv": what the download is saved as. */
export function csvFileName(domain: string, range: { from: string; to: string }): string {
  const safe = domain.replace(/[^A-Za-z0-9.-]/g, '_');
  return `crawlers-${safe}-${range.from}-${range.to}.csv`;
}
