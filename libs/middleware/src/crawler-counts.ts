/*
 * What the gate did with each visitor it classified, counted per UTC day, crawler and action (and
 * each crawler's most requested paths), for the site's crawler analytics. The counts ride on the
 * gate counts' batched report (gate-counts.ts): one call per interval, never a call per request.
 * Memory is bounded by what one report may carry, in entries and in JSON bytes; past that, new keys
 * are dropped until the next report (counts are lost, never money).
 */

import {
  MAX_CRAWLER_COUNT_BYTES_PER_REPORT,
  MAX_CRAWLER_COUNTS_PER_REPORT,
  MAX_CRAWLER_PATH_BYTES_PER_REPORT,
  MAX_CRAWLER_PATHS_PER_REPORT,
  MAX_TOP_PATH_LENGTH,
  MAX_TOP_PATHS_PER_CRAWLER,
  isUnnamedCrawler,
  utf8ByteLength,
  type CrawlerAction,
  type CrawlerCount,
  type CrawlerPathCount,
} from '@crawlgate/core';
import { BOT_CATALOGUE } from './bots';

const OPERATORS = new Map(BOT_CATALOGUE.map((bot) => [bot.name, bot.operator]));

/** Who runs a catalogued bot ("OpenAI" for GPTBot); null for the unknown ones. */
export function operatorOf(name: string): string | null {
  return OPERATORS.get(name) ?? null;
}

/** One request the gate classified, and what it did with it. */
export interface CrawlerSighting {
  crawler: string;
  category: string;
  operator: string | null;
  action: CrawlerAction;
  /** The priced path; counted among the crawler's top paths (people's paths are not kept). */
  path: string | null;
  /** Micro-USD of the page served for pay (action "paid"), else 0. */
  revenueMicros: bigint;
  /** Whether a Web Bot Auth signature verified who it is (web-bot-auth/); false for the User-Agent alone. */
  verified: boolean;
}

export interface CrawlerReport {
  crawlers: CrawlerCount[];
  paths: CrawlerPathCount[];
}

export interface CrawlerCounter {
  count(sighting: CrawlerSighting): void;
  /** What was counted since the last drain, as a report carries it; the counters start again empty. */
  drain(): CrawlerReport;
  /** Whether anything waits to be reported. */
  readonly pending: boolean;
}

/** Paths tracked per crawler and day: twice what the API keeps, so the top ones are rarely missed. */
const PATHS_TRACKED_PER_CRAWLER = 2 * MAX_TOP_PATHS_PER_CRAWLER;
/**
 * The bytes one verified crawler's paths may take of a report's verified half: an eighth, so at
 * least eight verified crawlers find room. Some are verified by their operator's addresses yet go
 * wherever anyone asks (Google's APIs-Google through Sheets): 28 long paths filled the half alone.
 */
const VERIFIED_PATH_BYTES_PER_CRAWLER = MAX_CRAWLER_PATH_BYTES_PER_REPORT / 2 / 8;
/** The API's path rule (a "/" then no white space). */
const REPORTABLE_PATH = /^\/\S*$/;
/** Room for an entry's numbers to grow after it is weighed: requests and revenue up to 16 more digits each. */
const NUMBER_ROOM = 32;

/** What `value` weighs in a report: its JSON's UTF-8 bytes, with room for its numbers to grow, and a comma. */
function reportBytes(value: object): number {
  return utf8ByteLength(JSON.stringify(value)) + NUMBER_ROOM + 1;
}

/**
 * The UTC day of `now()`, as YYYY-MM-DD, formatted only when the day changes: this runs on every
 * classified request, where a Date and toISOString() per call showed in the person path's profile.
 */
export function utcDayClock(now: () => number): () => string {
  let day = '';
  let from = Infinity;
  let until = -Infinity; // [from, until): the instants of `day`
  return () => {
    const at = now();
    if (at < from || at >= until) {
      from = Math.floor(at / 86_400_000) * 86_400_000;
      until = from + 86_400_000;
      day = new Date(from).toISOString().slice(0, 10);
    }
    return day;
  };
}

type Entry = { count: CrawlerCount; revenue: bigint };

/** What one half of a report's top paths holds so far. */
const emptyRoom = () => ({ paths: 0, bytes: 0 });

export function createCrawlerCounter(now: () => number = Date.now): CrawlerCounter {
  const today = utcDayClock(now);
  let counts = new Map<string, Entry>();
  let countBytes = 0;
  let paths = new Map<string, CrawlerPathCount>();
  // Verified catalogued crawlers' paths and the others' each have half the room: anyone can send long
  // paths unnamed, under a catalogued crawler's User-Agent or signed with a key of its own, and must
  // not crowd out the verified ones.
  let pathRoom = { verified: emptyRoom(), unverified: emptyRoom() };
  let pathsPerCrawler = new Map<string, { paths: number; bytes: number }>();
  // The last sighting's entry: runs of one kind (people, mostly) skip building and hashing a key.
  let last: { day: string; sighting: CrawlerSighting; entry: Entry } | undefined;

  /** The entry counting this kind of sighting today; created if the report has room, else undefined. */
  function entryOf(day: string, sighting: CrawlerSighting): Entry | undefined {
    const { crawler, category, operator, action, verified } = sighting;
    // Runs of one kind (people, mostly) reuse the last entry, with no key to build and hash.
    if (
      last !== undefined &&
      last.day === day &&
      last.sighting.crawler === crawler &&
      last.sighting.action === action &&
      last.sighting.verified === verified
    )
      return last.entry;
    const key = `${day}\n${crawler}\n${action}\n${verified}`;
    let entry = counts.get(key);
    if (!entry && counts.size < MAX_CRAWLER_COUNTS_PER_REPORT) {
      const count = { day, crawler, category, operator, action, verified, requests: 0, revenue_micros: '0' };
      const bytes = reportBytes(count);
      if (countBytes + bytes <= MAX_CRAWLER_COUNT_BYTES_PER_REPORT) {
        countBytes += bytes;
        entry = { count, revenue: 0n };
        counts.set(key, entry);
      }
    }
    if (entry) last = { day, sighting, entry };
    return entry;
  }

  return {
    count(sighting) {
      const { crawler, path, revenueMicros } = sighting;
      const day = today();
      const entry = entryOf(day, sighting);
      if (entry) {
        entry.count.requests++;
        // A bigint sum allocates: people and free passes, most requests, add nothing.
        if (revenueMicros !== 0n) entry.revenue += revenueMicros;
      }
      if (path === null || path.length > MAX_TOP_PATH_LENGTH || !REPORTABLE_PATH.test(path)) return;
      // Verified and not apart: a stranger claiming the crawler's name has its own paths, never its.
      const pathKey = `${day}\n${crawler}\n${sighting.verified}\n${path}`;
      const seen = paths.get(pathKey);
      if (seen) {
        seen.requests++;
        return;
      }
      const crawlerKey = `${day}\n${crawler}\n${sighting.verified}`;
      const tracked = pathsPerCrawler.get(crawlerKey) ?? { paths: 0, bytes: 0 };
      // A signature whose signer no catalogue names proves only that someone holds a key (anyone can
      // publish a directory): such a crawler's paths share the others' half.
      const inVerifiedRoom = sighting.verified && !isUnnamedCrawler(crawler);
      const room = inVerifiedRoom ? pathRoom.verified : pathRoom.unverified;
      if (tracked.paths >= PATHS_TRACKED_PER_CRAWLER || room.paths >= MAX_CRAWLER_PATHS_PER_REPORT / 2) return;
      const counted = { day, crawler, path, verified: sighting.verified, requests: 1 };
      const bytes = reportBytes(counted);
      if (room.bytes + bytes > MAX_CRAWLER_PATH_BYTES_PER_REPORT / 2) return;
      if (inVerifiedRoom && tracked.bytes + bytes > VERIFIED_PATH_BYTES_PER_CRAWLER) return;
      room.bytes += bytes;
      room.paths++;
      pathsPerCrawler.set(crawlerKey, { paths: tracked.paths + 1, bytes: tracked.bytes + bytes });
      paths.set(pathKey, counted);
    },
    drain() {
      const report = {
        crawlers: [...counts.values()].map(({ count, revenue }) => ({ ...count, revenue_micros: revenue.toString() })),
        paths: [...paths.values()],
      };
      counts = new Map();
      countBytes = 0;
      last = undefined;
      paths = new Map();
      pathRoom = { verified: emptyRoom(), unverified: emptyRoom() };
      pathsPerCrawler = new Map();
      return report;
    },
    get pending() {
      return counts.size > 0;
    },
  };
}
