import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { terminalSafe } from '@crawlgate/core';
import type { Site } from '@crawlgate/publisher';
import { useSession } from '../api-context';
import { ErrorNote } from '../components/error-note';
import { RangePicker, type RangeDays } from '../components/range-picker';
import { RevenueChart } from '../components/revenue-chart';
import { SitePicker } from '../components/site-picker';
import { formatRatio, formatUsd } from '../money';
import { lastDays, toOverview } from '../overview-data';
import { useLoad } from '../use-load';

export function OverviewPage({ sites }: { sites: Site[] }) {
  const { client } = useSession();
  const [siteId, setSiteId] = useState('');
  const [days, setDays] = useState<RangeDays>(30);
  const stats = useLoad(async () => {
    const range = lastDays(days);
    return toOverview(siteId ? await client.siteStats(siteId, range) : await client.stats(range), sites);
  }, [client, siteId, days, sites]);

  if (sites.length === 0) {
    return (
      <section>
        <h2>Overview</h2>
        <p>
          No sites yet. <a href="#/sites">Add your first site</a> to start charging AI crawlers.
        </p>
      </section>
    );
  }
  const overview = stats.data;
  return (
    <section>
      <h2>Overview</h2>
      <div class="toolbar">
        <SitePicker sites={sites} value={siteId} onChange={setSiteId} allLabel="All sites" />
        <RangePicker value={days} onChange={setDays} />
        {stats.loading && <span class="muted">Loading…</span>}
      </div>
      <ErrorNote error={stats.error} />
      {overview && (
        <>
          <div class="cards">
            <Card label="Revenue" value={formatUsd(overview.revenue)} testId="revenue" />
            <Card label="Paid crawls" value={String(overview.paidGates)} testId="paid-crawls" />
            <Card
              label="Conversion"
              value={formatRatio(overview.conversion)}
              testId="conversion"
              hint={`${overview.gatesCreated} priced requests`}
            />
            <Card label="Paying agents" value={String(overview.uniqueAgents)} testId="agents" />
          </div>
          <RevenueChart days={overview.byDay} />
          <div class="columns">
            <TopTable
              title="Top paths"
              keyHeader="Path"
              empty="No paid crawls in this range."
              rows={overview.topPaths.map((row) => ({
                key: `${row.site}${row.url}`,
                label: (
                  <>
                    <span class="muted">{siteId ? '' : row.site}</span>
                    {terminalSafe(row.url)}
                  </>
                ),
                ...row,
              }))}
            />
            <TopTable
              title="Top agents"
              keyHeader="Wallet"
              empty="No paying agents in this range."
              rows={overview.topAgents.map((row) => ({ key: row.address, label: <code>{row.address}</code>, ...row }))}
            />
          </div>
        </>
      )}
    </section>
  );
}

function TopTable({
  title,
  keyHeader,
  empty,
  rows,
}: {
  title: string;
  keyHeader: string;
  empty: string;
  rows: { key: string; label: ComponentChildren; paidGates: number; revenue: bigint }[];
}) {
  return (
    <table aria-label={title}>
      <caption>{title}</caption>
      <thead>
        <tr>
          <th>{keyHeader}</th>
          <th class="num">Paid</th>
          <th class="num">Revenue</th>
        </tr>
      </thead>
      <tbody>
        {rows.length === 0 && (
          <tr>
            <td colSpan={3} class="muted">
              {empty}
            </td>
          </tr>
        )}
        {rows.map((row) => (
          <tr key={row.key}>
            <td>{row.label}</td>
            <td class="num">{row.paidGates}</td>
            <td class="num">{formatUsd(row.revenue)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Card({ label, value, hint, testId }: { label: string; value: string; hint?: string; testId: string }) {
  return (
    <div class="card" data-testid={testId}>
      <span class="label">{label}</span>
      <strong class="value">{value}</strong>
      {hint && <small class="muted">{hint}</small>}
    </div>
  );
}
