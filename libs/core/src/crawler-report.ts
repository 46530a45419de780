/*
 * Crawler analytics on the wire: what a middleware reports about the requests it classified (with
 * its gate counts, in the same batched call), and what the API answers a publisher. Counts only,
 * never a row per request: per site, UTC day, crawler, action and whether its signature was verified.
 */

/** What the middleware did with a request. */
export const CRAWLER_ACTIONS = ['passed', 'allowed', 'blocked', 'charged', 'paid', 'token'] as const;
export type CrawlerAction = (typeof CRAWLER_ACTIONS)[number];

/** A report's size limits, which bound what a middleware keeps between two reports too. */
export const MAX_CRAWLER_COUNTS_PER_REPORT = 1_000;
export const MAX_CRAWLER_PATHS_PER_REPORT = 1_000;
/**
 * Names outside the catalogue and the groups below that the API keeps apart per site and day (a
 * newer middleware's catalogue may name bots this API does not know); the requests of any further
 * name count as OTHER_CRAWLERS. The cap bounds the rows a site token can add, made-up names and all.
 */
export const MAX_UNLISTED_CRAWLERS_PER_SITE_DAY = 20;
export const OTHER_CRAWLERS = 'other crawlers';
/**
 * Names outside the catalogue a crawlers view shows over its range, the busiest; the others' requests
 * are shown as OTHER_CRAWLERS. Twenty made-up names a day kept a year made a view of 7,500 crawlers.
 */
export const MAX_UNLISTED_CRAWLERS_IN_VIEW = 50;
/** The crawlers a view lists top paths for: its busiest, in its order (the others' lists are empty). */
export const MAX_CRAWLERS_WITH_TOP_PATHS = 50;
/** What the middleware names people, and an agent it cannot name that shows a payment or a token. */
export const PERSON = 'person';
export const UNLISTED_AGENT = 'unlisted agent';
/** Top paths kept per crawler and day, by the middleware and by the API. */
export const MAX_TOP_PATHS_PER_CRAWLER = 20;
/**
 * Top paths the API keeps per site and day in all, the busiest of every crawler's: 20 for each of
 * the 25 busiest crawlers, while a site token reporting made-up crawlers cannot store 20 paths
 * for each of the 500 crawler names a day may hold.
 */
export const MAX_TOP_PATHS_PER_SITE_DAY = 500;
/** The longest path listed among a crawler's top paths; a longer one is counted, not listed. */
export const MAX_TOP_PATH_LENGTH = 256;
/**
 * JSON bytes one report spends at most on crawler counts, and on top paths: together well under
 * the API's default body limit (256 KiB), so no flood of crawlers or paths (wide characters weigh
 * three bytes each) makes a report the API refuses whole, gate counts and all.
 */
export const MAX_CRAWLER_COUNT_BYTES_PER_REPORT = 176 * 1024;
export const MAX_CRAWLER_PATH_BYTES_PER_REPORT = 48 * 1024;
export const MAX_CRAWLER_NAME_LENGTH = 64;

/** Requests of one crawler with one outcome on one UTC day, since the last report. */
export interface CrawlerCount {
  /** UTC day, YYYY-MM-DD. */
  day: string;
  /** The bot's name ("GPTBot"), "person", or "unknown" for an agent we cannot name. */
  crawler: string;
  /** Its category ("ai-crawler", "search", "person", …). */
  category: string;
  /** Who runs it ("OpenAI"), null when unknown. */
  operator: string | null;
  action: CrawlerAction;
  /** Whether the request carried a valid Web Bot Auth signature of that operator. */
  verified: boolean;
  requests: number;
  /** Integer micro-USD of the pages served for pay (action "paid"), as a decimal string; "0" otherwise. */
  revenue_micros: string;
}

/** Requests of one crawler to one path on one UTC day (the middleware's top paths per crawler). */
export interface CrawlerPathCount {
  day: string;
  crawler: string;
  path: string;
  /**
   * Whether the crawler was verified on these requests (a signature, its operator's addresses): a
   * name any client can claim keeps its verified paths apart from those strangers asked for under
   * it. Absent (a middleware before it): not verified.
   */
  verified?: boolean;
  requests: number;
}

/** One crawler over a range of days, as GET /v1/sites/{id}/crawlers answers it. */
export interface CrawlerView {
  crawler: string;
  category: string;
  operator: string | null;
  requests: number;
  passed: number;
  allowed: number;
  blocked: number;
  /** Answered 402. */
  charged: number;
  paid: number;
  /** Served with an access token bought earlier. */
  token: number;
  revenue_usd: string;
  /** Verified requests ÷ requests, four decimals ("0.5000"). */
  verified_share: string;
  /** The paths it was verified on first, then the others, each by requests. */
  top_paths: { path: string; requests: number; verified: boolean }[];
}

/** Requests per action on one UTC day, over every crawler. */
export type CrawlerDayView = { day: string } & Record<CrawlerAction, number>;

export interface SiteCrawlersView {
  site_id: string;
  from: string;
  to: string;
  crawlers: CrawlerView[];
  days: CrawlerDayView[];
}
