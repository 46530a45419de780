import {
  MAX_CRAWLER_COUNT_BYTES_PER_REPORT,
  MAX_CRAWLER_COUNTS_PER_REPORT,
  MAX_CRAWLER_NAME_LENGTH,
  MAX_CRAWLER_PATH_BYTES_PER_REPORT,
  MAX_CRAWLER_PATHS_PER_REPORT,
  MAX_TOP_PATH_LENGTH,
  MAX_TOP_PATHS_PER_CRAWLER,
} from '@crawlgate/core';
import { createCrawlerCounter, operatorOf, utcDayClock, type CrawlerSighting } from './crawler-counts';

const sighting = (overrides: Partial<CrawlerSighting> = {}): CrawlerSighting => ({
  crawler: 'GPTBot',
  category: 'ai-training',
  operator: 'OpenAI',
  action: 'charged',
  path: '/a',
  revenueMicros: 0n,
  verified: false,
  ...overrides,
});

describe('createCrawlerCounter', () => {
  let clock = Date.parse('2026-11-23T23:59:59Z');
  const counter = () => createCrawlerCounter(() => clock);

  it('counts a run of one kind, broken by others, a drain and a full report, as each sighting alone', () => {
    const counts = counter();
    const person = sighting({ crawler: 'person', category: 'person', operator: null, action: 'passed', path: null });
    for (const next of [person, person, sighting(), person, sighting({ verified: true }), person]) counts.count(next);
    const requests = (report: ReturnType<typeof counts.drain>) =>
      report.crawlers.map(({ crawler, action, verified, requests }) => [crawler, action, verified, requests]);
    expect(requests(counts.drain())).toEqual([
      ['person', 'passed', false, 4],
      ['GPTBot', 'charged', false, 1],
      ['GPTBot', 'charged', true, 1],
    ]);
    // After a drain, the last sighting's entry is gone with the report it belonged to.
    counts.count(person);
    expect(requests(counts.drain())).toEqual([['person', 'passed', false, 1]]);
    // A full report keeps none of the kinds it has no room for, however often they repeat.
    for (let i = 0; i < MAX_CRAWLER_COUNTS_PER_REPORT; i++) counts.count(sighting({ crawler: `Bot${i}` }));
    counts.count(person);
    counts.count(person);
    const full = counts.drain();
    // Full by its entries or by its bytes, whichever comes first.
    expect(full.crawlers.length).toBeLessThanOrEqual(MAX_CRAWLER_COUNTS_PER_REPORT);
    expect(full.crawlers.length).toBeGreaterThan(MAX_CRAWLER_COUNTS_PER_REPORT / 2);
    expect(full.crawlers.some((count) => count.crawler === 'person')).toBe(false);
  });

  it('counts per day, crawler and action, sums revenue as a decimal string, and starts again empty after a drain', () => {
    const counts = counter();
    expect(counts.pending).toBe(false);
    counts.count(sighting());
    counts.count(sighting());
    counts.count(sighting({ action: 'paid', revenueMicros: 10_000n }));
    counts.count(sighting({ action: 'paid', revenueMicros: 2_500n }));
    clock += 1000; // past midnight: another day
    counts.count(sighting());
    expect(counts.pending).toBe(true);
    const report = counts.drain();
    expect(report.crawlers).toEqual([
      {
        day: '2026-11-23',
        crawler: 'GPTBot',
        category: 'ai-training',
        operator: 'OpenAI',
        action: 'charged',
        verified: false,
        requests: 2,
        revenue_micros: '0',
      },
      {
        day: '2026-11-23',
        crawler: 'GPTBot',
        category: 'ai-training',
        operator: 'OpenAI',
        action: 'paid',
        verified: false,
        requests: 2,
        revenue_micros: '12500',
      },
      {
        day: '2026-11-24',
        crawler: 'GPTBot',
        category: 'ai-training',
        operator: 'OpenAI',
        action: 'charged',
        verified: false,
        requests: 1,
        revenue_micros: '0',
      },
    ]);
    expect(report.paths).toEqual([
      { day: '2026-11-23', crawler: 'GPTBot', path: '/a', verified: false, requests: 4 },
      { day: '2026-11-24', crawler: 'GPTBot', path: '/a', verified: false, requests: 1 },
    ]);
    expect(counts.pending).toBe(false);
    expect(counts.drain()).toEqual({ crawlers: [], paths: [] });
  });

  it('counts verified and unverified requests of one crawler apart, so the verified share is what was verified', () => {
    const counts = counter();
    counts.count(sighting({ crawler: 'ChatGPT agent', verified: true }));
    counts.count(sighting({ crawler: 'ChatGPT agent', verified: true }));
    counts.count(sighting({ crawler: 'ChatGPT agent' }));
    const report = counts.drain();
    expect(report.crawlers.map(({ verified, requests }) => ({ verified, requests }))).toEqual([
      { verified: true, requests: 2 },
      { verified: false, requests: 1 },
    ]);
    // Its paths too: a stranger claiming its name has its own, never the ones it was verified on.
    expect(report.paths.map(({ path, verified, requests }) => ({ path, verified, requests }))).toEqual([
      { path: '/a', verified: true, requests: 2 },
      { path: '/a', verified: false, requests: 1 },
    ]);
  });

  it('keeps no path for people, nor paths the API would refuse', () => {
    const counts = counter();
    counts.count(sighting({ crawler: 'person', category: 'person', operator: null, action: 'passed', path: null }));
    for (const path of ['/with space', 'no-slash', '/' + 'a'.repeat(2048)]) counts.count(sighting({ path }));
    expect(counts.drain().paths).toEqual([]);
  });

  it('stays within the JSON bytes a report may spend, with long names and long wide-character paths', () => {
    const counts = counter();
    const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
    for (let i = 0; i < MAX_CRAWLER_COUNTS_PER_REPORT + 50; i++) {
      const crawler = `${i}-`.padEnd(MAX_CRAWLER_NAME_LENGTH, '漢');
      counts.count(sighting({ crawler, operator: 'o'.repeat(MAX_CRAWLER_NAME_LENGTH), path: `/${i}` }));
      // Verified and not: each half of the room filled.
      counts.count(sighting({ crawler, path: `/${i}`.padEnd(MAX_TOP_PATH_LENGTH, '漢'), verified: i % 2 === 0 }));
      counts.count(sighting({ crawler, path: `/${i}`.padEnd(MAX_TOP_PATH_LENGTH + 1, 'a') }));
    }
    // Many requests to counted keys later: their numbers grow within the room kept for them.
    for (let i = 0; i < 1000; i++)
      counts.count(sighting({ crawler: '0-'.padEnd(MAX_CRAWLER_NAME_LENGTH, '漢'), path: '/0' }));
    const report = counts.drain();
    expect(report.crawlers.length).toBeGreaterThan(100);
    expect(report.paths.length).toBeGreaterThan(50);
    expect(bytes(report.crawlers)).toBeLessThanOrEqual(MAX_CRAWLER_COUNT_BYTES_PER_REPORT);
    expect(bytes(report.paths)).toBeLessThanOrEqual(MAX_CRAWLER_PATH_BYTES_PER_REPORT);
    // A path longer than a top path may be is counted (its crawler's requests), never listed.
    expect(report.paths.some((p) => p.path.length > MAX_TOP_PATH_LENGTH)).toBe(false);
  });

  it("keeps room for verified crawlers' paths, however many long paths unverified visitors send first", () => {
    const counts = counter();
    const wide = (i: number) => `/free/${i}/`.padEnd(MAX_TOP_PATH_LENGTH, '漢');
    // Anyone can go unnamed or write a catalogued crawler's User-Agent: unverified, they share half the room.
    for (const crawler of ['unknown-automation', 'unknown-crawler', 'GPTBot', 'ClaudeBot', 'Bytespider', 'CCBot'])
      for (let i = 0; i < 200; i++) counts.count(sighting({ crawler, path: wide(i) }));
    for (let i = 0; i < 3; i++) counts.count(sighting({ verified: true, path: `/articles/real-${i}` }));
    const report = counts.drain();
    expect(
      report.paths
        .filter((p) => p.path.startsWith('/articles/'))
        .map(({ crawler, path, requests }) => [crawler, path, requests]),
    ).toEqual([0, 1, 2].map((i) => ['GPTBot', `/articles/real-${i}`, 1]));
    expect(report.paths.length).toBeGreaterThan(20);
    expect(Buffer.byteLength(JSON.stringify(report.paths))).toBeLessThanOrEqual(MAX_CRAWLER_PATH_BYTES_PER_REPORT);
  });

  it('keeps that room from signers no catalogue names: anyone can publish a key directory and sign', () => {
    const counts = counter();
    const wide = (i: number) => `/own/${i}/`.padEnd(MAX_TOP_PATH_LENGTH, '漢');
    // Signed with a key of its own directory: verified as itself, an unnamed automation.
    for (let i = 0; i < 200; i++)
      counts.count(sighting({ crawler: 'unknown-automation', verified: true, path: wide(i) }));
    counts.count(sighting({ crawler: 'Googlebot', verified: true, path: '/articles/real-story' }));
    counts.count(sighting({ crawler: 'ChatGPT agent', verified: true, path: '/articles/real-story' }));
    const report = counts.drain();
    expect(
      report.paths.filter((p) => p.path.startsWith('/articles/')).map(({ crawler, verified }) => [crawler, verified]),
    ).toEqual([
      ['Googlebot', true],
      ['ChatGPT agent', true],
    ]);
    // Its requests still count as verified ones.
    expect(report.crawlers.find((c) => c.crawler === 'unknown-automation')).toMatchObject({
      verified: true,
      requests: 200,
    });
  });

  it('keeps a verified crawler to its share of that room: one anyone can send (APIs-Google) cannot fill it', () => {
    // Google's user-triggered fetchers come from Google's addresses (verified) for whoever asks them:
    // 28 long paths sent through Sheets filled the verified half, and Googlebot's and GPTBot's were dropped.
    const counts = counter();
    const wide = (i: number) => `/${i}/`.padEnd(MAX_TOP_PATH_LENGTH, '一');
    for (let i = 0; i < 60; i++) counts.count(sighting({ crawler: 'APIs-Google', verified: true, path: wide(i) }));
    for (const crawler of ['Googlebot', 'GPTBot'])
      for (let i = 0; i < 3; i++) counts.count(sighting({ crawler, verified: true, path: `/articles/${i}` }));
    const report = counts.drain();
    expect(report.paths.filter((p) => p.path.startsWith('/articles/')).map(({ crawler }) => crawler)).toEqual([
      ...Array(3).fill('Googlebot'),
      ...Array(3).fill('GPTBot'),
    ]);
    const fetcherBytes = Buffer.byteLength(JSON.stringify(report.paths.filter((p) => p.crawler === 'APIs-Google')));
    expect(fetcherBytes).toBeLessThanOrEqual(MAX_CRAWLER_PATH_BYTES_PER_REPORT / 2 / 8 + 1_000);
    expect(report.paths.filter((p) => p.crawler === 'APIs-Google').length).toBeGreaterThan(0);
  });

  it('stays within what one report may carry, however many crawlers and paths it sees', () => {
    const counts = counter();
    for (let i = 0; i < MAX_CRAWLER_COUNTS_PER_REPORT + 50; i++)
      counts.count(sighting({ crawler: `bot-${i}`, path: `/p/${i}` }));
    for (let i = 0; i < 100; i++) counts.count(sighting({ crawler: 'bot-0', path: `/q/${i}` }));
    const report = counts.drain();
    expect(report.crawlers.length).toBeLessThanOrEqual(MAX_CRAWLER_COUNTS_PER_REPORT);
    expect(report.paths.length).toBeLessThanOrEqual(MAX_CRAWLER_PATHS_PER_REPORT);
    expect(report.paths.filter((p) => p.crawler === 'bot-0').length).toBeLessThanOrEqual(2 * MAX_TOP_PATHS_PER_CRAWLER);
    // A key already counted keeps counting when the table is full.
    const again = counter();
    for (let i = 0; i < MAX_CRAWLER_COUNTS_PER_REPORT + 50; i++) again.count(sighting({ crawler: `bot-${i}` }));
    again.count(sighting({ crawler: 'bot-0' }));
    again.count(sighting({ crawler: 'late' }));
    const crawlers = again.drain().crawlers;
    expect(crawlers.find((c) => c.crawler === 'bot-0')?.requests).toBe(2);
    expect(crawlers.some((c) => c.crawler === 'late')).toBe(false);
  });
});

describe('utcDayClock', () => {
  it('names the UTC day of each instant, across midnight, backwards and before 1970', () => {
    let at = Date.parse('2026-11-23T23:59:59.999Z');
    const day = utcDayClock(() => at);
    expect(day()).toBe('2026-11-23');
    at += 1;
    expect(day()).toBe('2026-11-24');
    at = Date.parse('2026-11-22T12:00:00Z');
    expect(day()).toBe('2026-11-22');
    at = Date.parse('1969-12-31T23:00:00Z');
    expect(day()).toBe('1969-12-31');
  });
});

describe('operatorOf', () => {
  it('names who runs a catalogued bot, and no one for others', () => {
    expect(operatorOf('GPTBot')).toBe('OpenAI');
    expect(operatorOf('unlisted agent')).toBeNull();
  });
});
