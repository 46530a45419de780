import { print, stringValue, type Command } from '../command';
import { openSite, SITE_HELP } from '../site-ref';
import { fields, table } from '../table';

export const stats: Command = {
  name: 'stats',
  usage: '<site> [--from <YYYY-MM-DD>] [--to <YYYY-MM-DD>]',
  summary: 'Revenue, gates, conversion, top paths and agents of a site, by UTC day',
  help: `Days are UTC; both ends are included. Default: the last 30 days. At most 366 days.\n${SITE_HELP}`,
  options: { from: { type: 'string' }, to: { type: 'string' } },
  positionals: ['site'],
  async run(input) {
    const { client, siteId } = await openSite(input);
    const report = await client.siteStats(siteId, {
      from: stringValue(input.values, 'from'),
      to: stringValue(input.values, 'to'),
    });
    print(input, report, () =>
      [
        fields([
          ['Site', report.site_id],
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
              ['TOP PATH', 'PAID', 'USD'],
              report.top_paths.map((p) => [p.url, String(p.paid_gates), p.revenue_usd]),
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
      ].join('\n'),
    );
  },
};
