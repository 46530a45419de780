import type { PublisherStats, SiteStats } from '../../types';
import { print, stringValue, type Command } from '../command';
import { authedClient } from '../session';
import { openSite, SITE_HELP } from '../site-ref';
import { fields, table } from '../table';

export const stats: Command = {
  name: 'stats',
  usage: '[<site>] [--from <YYYY-MM-DD>] [--to <YYYY-MM-DD>]',
  summary: 'Revenue, gates, conversion, top paths and agents of a site, or of all your sites, by UTC day',
  help: `Without <site>: all your sites, counted at once. Days are UTC; both ends are included. Default: the last 30 days. At most 366 days.\n${SITE_HELP}`,
  options: { from: { type: 'string' }, to: { type: 'string' } },
  positionals: [],
  optionalPositionals: ['site'],
  async run(input) {
    const range = { from: stringValue(input.values, 'from'), to: stringValue(input.values, 'to') };
    if (input.args.length > 0) {
      const { client, siteId } = await openSite(input);
      const report = await client.siteStats(siteId, range);
      print(input, report, () => statsText(report, ['Site', report.site_id], ['TOP PATH'], (path) => [path.url]));
      return;
    }
    const client = await authedClient(input.values, input.io);
    const report = await client.stats(range);
    // Paths are named by their site's domain; the sites are read only for the table.
    const domains = input.values.json
      ? new Map<string, string>()
      : new Map((await client.listSites()).items.map((site) => [site.site_id, site.domain]));
    print(input, report, () =>
      statsText(report, ['Sites', 'all'], ['SITE', 'TOP PATH'], (path) => [
        domains.get(path.site_id) ?? path.site_id,
        path.url,
      ]),
    );
  },
};

function statsText<Report extends SiteStats | PublisherStats>(
  report: Report,
  scope: [string, string],
  pathHeaders: string[],
  pathCells: (path: Report['top_paths'][number]) => string[],
): string {
  return [
    fields([
      scope,
      ['Days (UTC)', `${report.from} to ${report.to}`],
      ['Revenue USD', report.revenue_usd],
      ['Paid gates', String(report.paid_gates)],
      ['Gates created', String(report.gates_created)],
      ['Conversion', report.conversion],
      ['Paying agents', String(report.unique_agents)],
    ]),
    report.top_paths.length === 0
      ? 'Top paths: none yet\n'
      : table(
          [...pathHeaders, 'PAID', 'USD'],
          report.top_paths.map((p) => [...pathCells(p), String(p.paid_gates), p.revenue_usd]),
        ),
    report.top_agents.length === 0
      ? 'Top agents: none yet\n'
      : table(
          ['TOP AGENT', 'PAID', 'USD'],
          report.top_agents.map((a) => [a.address, String(a.paid_gates), a.revenue_usd]),
        ),
    table(
      ['DAY', 'USD', 'PAID', 'GATES'],
      report.by_day.map((d) => [d.day, d.revenue_usd, String(d.paid_gates), String(d.gates_created)]),
    ),
  ].join('\n');
}
