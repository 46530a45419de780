import type { CrawlerDayView, CrawlerView } from '@crawlgate/publisher';
import { crawlerRows, csvFileName, totalRequests } from './crawlers-data';

const gptBot: CrawlerView = {
  crawler: 'GPTBot',
  category: 'ai-training',
  operator: 'OpenAI',
  requests: 14,
  passed: 0,
  allowed: 0,
  blocked: 0,
  charged: 8,
  paid: 2,
  token: 4,
  revenue_usd: '1234.005',
  verified_share: '0.2143',
  top_paths: [{ path: '/a', requests: 9, verified: true }],
};

const day = (overrides: Partial<CrawlerDayView>): CrawlerDayView => ({
  day: '2026-11-01',
  passed: 0,
  allowed: 0,
  blocked: 0,
  charged: 0,
  paid: 0,
  token: 0,
  ...overrides,
});

describe('crawlerRows', () => {
  it('keeps every count, turns revenue into micro-USD and the verified share into a number', () => {
    expect(crawlerRows({ crawlers: [gptBot] })).toEqual([
      {
        crawler: 'GPTBot',
        category: 'ai-training',
        operator: 'OpenAI',
        requests: 14,
        counts: { passed: 0, allowed: 0, blocked: 0, charged: 8, paid: 2, token: 4 },
        revenue: 1_234_005_000n,
        verifiedShare: 0.2143,
        topPaths: [{ path: '/a', requests: 9, verified: true }],
      },
    ]);
  });

  it('refuses a revenue that is no USD amount rather than show a wrong one', () => {
    expect(() => crawlerRows({ crawlers: [{ ...gptBot, revenue_usd: '1e3' }] })).toThrow(RangeError);
  });
});

describe('totalRequests', () => {
  it('adds every action of every day', () => {
    expect(totalRequests([])).toBe(0);
    expect(totalRequests([day({}), day({ day: '2026-11-02' })])).toBe(0);
    expect(
      totalRequests([
        day({ passed: 1, token: 2 }),
        day({ day: '2026-11-02', blocked: 3, charged: 4, paid: 5, allowed: 6 }),
      ]),
    ).toBe(21);
  });
});

describe('csvFileName', () => {
  it('names the site and the range, with nothing a file system would trip on', () => {
    expect(csvFileName('news.example.com', { from: '2026-11-01', to: '2026-11-30' })).toBe(
      'crawlers-news.example.com-2026-11-01-2026-11-30.csv',
    );
    expect(csvFileName('a/b\\c:d', { from: '2026-11-01', to: '2026-11-01' })).toBe(
      'crawlers-a_b_c_d-2026-11-01-2026-11-01.csv',
    );
  });
});
