import type { Site, SiteStats } from '@crawlgate/publisher';
import { usdToMicros } from './money';

/** What the overview shows: one site's stats, or every site's added up. Money in micro-USD. */
export interface Overview {
  revenue: bigint;
  paidGates: number;
  gatesCreated: number;
  /** paid / created, in 0..1; null when no gate was created. */
  conversion: number | null;
  /** Distinct paying wallets; null across several sites, where the API's per-site counts cannot be added. */
  uniqueAgents: number | null;
  byDay: { day: string; revenue: bigint; paidGates: number; gatesCreated: number }[];
  topPaths: { site: string; url: string; paidGates: number; revenue: bigint }[];
  topAgents: { address: string; paidGates: number; revenue: bigint }[];
}

const TOP = 10;

/** Adds up per-site stats of one date range; top lists are merged and cut to the top ten by revenue. */
export function combineStats(entries: readonly { site: Pick<Site, 'domain'>; stats: SiteStats }[]): Overview {
  const byDay = new Map<string, Overview['byDay'][number]>();
  const agents = new Map<string, Overview['topAgents'][number]>();
  const paths: Overview['topPaths'] = [];
  let revenue = 0n;
  let paidGates = 0;
  let gatesCreated = 0;

  for (const { site, stats } of entries) {
    revenue += BigInt(stats.revenue_amount);
    paidGates += stats.paid_gates;
    gatesCreated += stats.gates_created;
    for (const day of stats.by_day) {
      const sum = byDay.get(day.day) ?? { day: day.day, revenue: 0n, paidGates: 0, gatesCreated: 0 };
      byDay.set(day.day, {
        day: day.day,
        revenue: sum.revenue + usdToMicros(day.revenue_usd),
        paidGates: sum.paidGates + day.paid_gates,
        gatesCreated: sum.gatesCreated + day.gates_created,
      });
    }
    for (const path of stats.top_paths)
      paths.push({
        site: site.domain,
        url: path.url,
        paidGates: path.paid_gates,
        revenue: usdToMicros(path.revenue_usd),
      });
    for (const agent of stats.top_agents) {
      const sum = agents.get(agent.address) ?? { address: agent.address, paidGates: 0, revenue: 0n };
      agents.set(agent.address, {
        address: agent.address,
        paidGates: sum.paidGates + agent.paid_gates,
        revenue: sum.revenue + usdToMicros(agent.revenue_usd),
      });
    }
  }

  return {
    revenue,
    paidGates,
    gatesCreated,
    conversion: gatesCreated === 0 ? null : paidGates / gatesCreated,
    uniqueAgents: entries.length === 1 ? entries[0].stats.unique_agents : null,
    byDay: [...byDay.values()].sort((a, b) => a.day.localeCompare(b.day)),
    topPaths: byRevenue(paths),
    topAgents: byRevenue([...agents.values()]),
  };
}

function byRevenue<T extends { revenue: bigint; paidGates: number }>(rows: T[]): T[] {
  return rows
    .sort((a, b) => (a.revenue === b.revenue ? b.paidGates - a.paidGates : a.revenue > b.revenue ? -1 : 1))
    .slice(0, TOP);
}

/** The last `days` whole UTC days, today included, as the stats endpoint's from/to. */
export function lastDays(days: number, now = new Date()): { from: string; to: string } {
  const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const from = new Date(to.getTime() - (days - 1) * 86_400_000);
  return { from: from.toISOString().slice(0, 10), to: to.toISOString().slice(0, 10) };
}
