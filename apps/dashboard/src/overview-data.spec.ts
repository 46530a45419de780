import type { SiteStats } from '@crawlgate/publisher';
import { combineStats, lastDays } from './overview-data';

function stats(overrides: Partial<SiteStats>): SiteStats {
  return {
    site_id: 's',
    from: '2026-11-01',
    to: '2026-11-02',
    revenue_usd: '0',
    revenue_amount: '0',
    paid_gates: 0,
    gates_created: 0,
    conversion: '0',
    unique_agents: 0,
    top_paths: [],
    top_agents: [],
    by_day: [],
    ...overrides,
  };
}

const ALICE = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const BOB = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';

describe('combineStats', () => {
  const news = stats({
    revenue_usd: '0.3',
    revenue_amount: '300000',
    paid_gates: 3,
    gates_created: 10,
    unique_agents: 2,
    top_paths: [
      { url: '/a', paid_gates: 2, revenue_usd: '0.2' },
      { url: '/b', paid_gates: 1, revenue_usd: '0.1' },
    ],
    top_agents: [
      { address: ALICE, paid_gates: 2, revenue_usd: '0.2' },
      { address: BOB, paid_gates: 1, revenue_usd: '0.1' },
    ],
    by_day: [
      { day: '2026-11-01', revenue_usd: '0.1', paid_gates: 1, gates_created: 4 },
      { day: '2026-11-02', revenue_usd: '0.2', paid_gates: 2, gates_created: 6 },
    ],
  });
  const blog = stats({
    revenue_usd: '0.25',
    revenue_amount: '250000',
    paid_gates: 1,
    gates_created: 2,
    unique_agents: 1,
    top_paths: [{ url: '/a', paid_gates: 1, revenue_usd: '0.25' }],
    top_agents: [{ address: BOB, paid_gates: 1, revenue_usd: '0.25' }],
    by_day: [
      { day: '2026-11-01', revenue_usd: '0', paid_gates: 0, gates_created: 1 },
      { day: '2026-11-02', revenue_usd: '0.25', paid_gates: 1, gates_created: 1 },
    ],
  });

  it('shows one site as the API reported it', () => {
    const overview = combineStats([{ site: { domain: 'news.example' }, stats: news }]);
    expect(overview).toMatchObject({
      revenue: 300_000n,
      paidGates: 3,
      gatesCreated: 10,
      conversion: 0.3,
      uniqueAgents: 2,
    });
    expect(overview.byDay.map((d) => d.revenue)).toEqual([100_000n, 200_000n]);
  });

  it('adds sites up exactly: revenue in micro-USD, days and wallets merged, paths kept per site', () => {
    const overview = combineStats([
      { site: { domain: 'news.example' }, stats: news },
      { site: { domain: 'blog.example' }, stats: blog },
    ]);
    expect(overview).toMatchObject({ revenue: 550_000n, paidGates: 4, gatesCreated: 12, uniqueAgents: null });
    expect(overview.conversion).toBeCloseTo(4 / 12);
    expect(overview.byDay).toEqual([
      { day: '2026-11-01', revenue: 100_000n, paidGates: 1, gatesCreated: 5 },
      { day: '2026-11-02', revenue: 450_000n, paidGates: 3, gatesCreated: 7 },
    ]);
    expect(overview.topAgents).toEqual([
      { address: BOB, paidGates: 2, revenue: 350_000n },
      { address: ALICE, paidGates: 2, revenue: 200_000n },
    ]);
    expect(overview.topPaths.map((p) => `${p.site}${p.url}`)).toEqual([
      'blog.example/a',
      'news.example/a',
      'news.example/b',
    ]);
  });

  it('has no conversion without gates, and no rows without sites', () => {
    expect(combineStats([])).toMatchObject({ revenue: 0n, conversion: null, byDay: [], topPaths: [] });
  });
});

describe('lastDays', () => {
  it('ends today (UTC) and spans the number of days asked', () => {
    expect(lastDays(7, new Date('2026-11-22T23:30:00-05:00'))).toEqual({ from: '2026-11-17', to: '2026-11-23' });
    expect(lastDays(1, new Date('2026-03-01T00:00:00Z'))).toEqual({ from: '2026-03-01', to: '2026-03-01' });
  });
});
