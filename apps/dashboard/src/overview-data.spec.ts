import type { PublisherStats, SiteStats } from '@crawlgate/publisher';
import { lastDays, toOverview } from './overview-data';

const ALICE = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const BOB = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';
const SITES = [
  { site_id: 'news-id', domain: 'news.example' },
  { site_id: 'blog-id', domain: 'blog.example' },
];

const totals = {
  from: '2026-11-01',
  to: '2026-11-02',
  revenue_usd: '0.55',
  revenue_amount: '550000',
  paid_gates: 4,
  gates_created: 12,
  conversion: '0.3333',
  unique_agents: 2,
  top_agents: [
    { address: BOB, paid_gates: 2, revenue_usd: '0.35' },
    { address: ALICE, paid_gates: 2, revenue_usd: '0.2' },
  ],
  by_day: [
    { day: '2026-11-01', revenue_usd: '0.1', paid_gates: 1, gates_created: 5 },
    { day: '2026-11-02', revenue_usd: '0.45', paid_gates: 3, gates_created: 7 },
  ],
};

describe('toOverview', () => {
  it('shows every site as the API counted them: money in micro-USD, paths named by their site', () => {
    const stats: PublisherStats = {
      ...totals,
      top_paths: [
        { site_id: 'blog-id', url: '/a', paid_gates: 1, revenue_usd: '0.25' },
        { site_id: 'news-id', url: '/a', paid_gates: 2, revenue_usd: '0.2' },
      ],
    };
    const overview = toOverview(stats, SITES);
    expect(overview).toMatchObject({ revenue: 550_000n, paidGates: 4, gatesCreated: 12, uniqueAgents: 2 });
    expect(overview.conversion).toBeCloseTo(4 / 12);
    expect(overview.byDay).toEqual([
      { day: '2026-11-01', revenue: 100_000n, paidGates: 1, gatesCreated: 5 },
      { day: '2026-11-02', revenue: 450_000n, paidGates: 3, gatesCreated: 7 },
    ]);
    expect(overview.topAgents).toEqual([
      { address: BOB, paidGates: 2, revenue: 350_000n },
      { address: ALICE, paidGates: 2, revenue: 200_000n },
    ]);
    expect(overview.topPaths.map((p) => `${p.site}${p.url}`)).toEqual(['blog.example/a', 'news.example/a']);
  });

  it('names one site’s paths by that site, and has no conversion without gates', () => {
    const stats: SiteStats = {
      ...totals,
      site_id: 'news-id',
      gates_created: 0,
      top_paths: [{ url: '/b', paid_gates: 1, revenue_usd: '0.1' }],
    };
    const overview = toOverview(stats, SITES);
    expect(overview.conversion).toBeNull();
    expect(overview.topPaths).toEqual([{ site: 'news.example', url: '/b', paidGates: 1, revenue: 100_000n }]);
  });
});

describe('lastDays', () => {
  it('ends today (UTC) and spans the number of days asked', () => {
    expect(lastDays(7, new Date('2026-11-22T23:30:00-05:00'))).toEqual({ from: '2026-11-17', to: '2026-11-23' });
    expect(lastDays(1, new Date('2026-03-01T00:00:00Z'))).toEqual({ from: '2026-03-01', to: '2026-03-01' });
  });
});
