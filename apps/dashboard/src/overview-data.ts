import type { PublisherStats, PublisherTopPath, Site, SiteStats, TopPath } from '@crawlgate/publisher';
import { usdToMicros } from './money';

/** What the overview shows: one site's stats, or every site's (counted by the API at once). Money in micro-USD. */
export interface Overview {
  revenue: bigint;
  paidGates: number;
  gatesCreated: number;
  /** paid / created, in 0..1; null when no gate was created. */
  conversion: number | null;
  /** Distinct paying wallets. */
  uniqueAgents: number;
  byDay: { day: string; revenue: bigint; paidGates: number; gatesCreated: number }[];
  topPaths: { site: string; url: string; paidGates: number; revenue: bigint }[];
  topAgents: { address: string; paidGates: number; revenue: bigint }[];
}

/** One site's stats or the publisher's; top paths are named by their site's domain. */
export function toOverview(
  stats: SiteStats | PublisherStats,
  sites: readonly Pick<Site, 'site_id' | 'domain'>[],
): Overview {
  const domains = new Map(sites.map((site) => [site.site_id, site.domain]));
  const siteOf = (path: TopPath | PublisherTopPath) =>
    domains.get('site_id' in path ? path.site_id : (stats as SiteStats).site_id) ?? '';
  return {
    revenue: BigInt(stats.revenue_amount),
    paidGates: stats.paid_gates,
    gatesCreated: stats.gates_created,
    conversion: stats.gates_created === 0 ? null : stats.paid_gates / stats.gates_created,
    uniqueAgents: stats.unique_agents,
    byDay: stats.by_day.map((day) => ({
      day: day.day,
      revenue: usdToMicros(day.revenue_usd),
      paidGates: day.paid_gates,
      gatesCreated: day.gates_created,
    })),
    topPaths: stats.top_paths.map((path) => ({
      site: siteOf(path),
      url: path.url,
      paidGates: path.paid_gates,
      revenue: usdToMicros(path.revenue_usd),
    })),
    topAgents: stats.top_agents.map((agent) => ({
      address: agent.address,
      paidGates: agent.paid_gates,
      revenue: usdToMicros(agent.revenue_usd),
    })),
  };
}

/** The last `days` whole UTC days, today included, as the stats endpoint's from/to. */
export function lastDays(days: number, now = new Date()): { from: string; to: string } {
  const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const from = new Date(to.getTime() - (days - 1) * 86_400_000);
  return { from: from.toISOString().slice(0, 10), to: to.toISOString().slice(0, 10) };
}
