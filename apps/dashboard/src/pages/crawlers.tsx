import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import type { Site } from '@crawlgate/publisher';
import { terminalSafe } from '@crawlgate/core';
import { useSession } from '../api-context';
import { BotActionButtons } from '../components/bot-action-buttons';
import { CsvDownload } from '../components/csv-download';
import { ErrorNote, errorMessage } from '../components/error-note';
import { OneSitePage } from '../components/one-site-page';
import { RangePicker, type RangeDays } from '../components/range-picker';
import { RequestsChart } from '../components/requests-chart';
import { ACTIONS, crawlerRows, totalRequests, type CrawlerRow } from '../crawlers-data';
import { formatRatio, formatUsd } from '../money';
import { lastDays } from '../overview-data';
import { useBotPolicy, type BotPolicyState } from '../use-bot-policy';
import { useLoad } from '../use-load';

export function CrawlersPage({ sites, siteId }: { sites: Site[]; siteId: string | null }) {
  const [days, setDays] = useState<RangeDays>(30);
  return (
    <OneSitePage
      page="crawlers"
      title="Crawlers"
      sites={sites}
      siteId={siteId}
      tools={<RangePicker value={days} onChange={setDays} />}
    >
      {(site) => <SiteCrawlers key={site.site_id} site={site} days={days} />}
    </OneSitePage>
  );
}

/** One site's crawlers over the last `days` UTC days, as its middleware reported them. */
function SiteCrawlers({ site, days }: { site: Site; days: RangeDays }) {
  const { client } = useSession();
  const range = lastDays(days);
  const view = useLoad(() => client.siteCrawlers(site.site_id, range), [client, site.site_id, range.from, range.to]);
  const data = view.data;
  const policy = useBotPolicy(site.site_id);
  return (
    <>
      <div class="row">
        <CsvDownload site={site} range={range} />
        {view.loading && <span class="muted">Loading…</span>}
      </div>
      <ErrorNote error={view.error} />
      {data &&
        (totalRequests(data.days) === 0 ? (
          <p class="panel" data-testid="no-crawlers">
            No requests reported for {site.domain} from {data.from} to {data.to}. The middleware reports what it sees
            with its gate counts, about every 10 seconds once it has traffic.
          </p>
        ) : (
          <>
            <RequestsChart days={data.days} />
            {policy.loadError !== undefined && (
              <p class="error" role="alert">
                The bot policy could not be loaded, so the actions are not shown: {errorMessage(policy.loadError)}
              </p>
            )}
            <CrawlerTable rows={crawlerRows(data)} policy={policy} />
          </>
        ))}
    </>
  );
}

function CrawlerTable({ rows, policy }: { rows: CrawlerRow[]; policy: BotPolicyState }) {
  const [open, setOpen] = useState<string | null>(null);
  const columns = 9 + ACTIONS.length;
  return (
    <div class="table-scroll">
      <table aria-label="Crawlers">
        <thead>
          <tr>
            <th>Crawler</th>
            <th>Operator</th>
            <th>Category</th>
            <th>Action</th>
            <th class="num">Requests</th>
            {ACTIONS.map(({ action, label }) => (
              <th key={action} class="num">
                {label}
              </th>
            ))}
            <th class="num">Revenue</th>
            <th class="num">Verified</th>
            <th>Top paths</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row, index) => {
            const expanded = open === row.crawler;
            // By the row's place: names that differ only in characters an id cannot hold ("Cốc Cốc") stay apart.
            const panelId = `paths-${index}`;
            return (
              <Fragment key={row.crawler}>
                <tr data-crawler={row.crawler}>
                  <th scope="row">{terminalSafe(row.crawler)}</th>
                  <td>{row.operator === null ? '–' : terminalSafe(row.operator)}</td>
                  <td>{terminalSafe(row.category)}</td>
                  <td data-column="action">
                    <BotActionButtons row={row} policy={policy} />
                  </td>
                  <td class="num" data-column="requests">
                    {row.requests}
                  </td>
                  {ACTIONS.map(({ action }) => (
                    <td key={action} class="num" data-column={action}>
                      {row.counts[action]}
                    </td>
                  ))}
                  <td class="num" data-column="revenue">
                    {formatUsd(row.revenue)}
                  </td>
                  <td class="num" data-column="verified">
                    {formatRatio(row.verifiedShare)}
                  </td>
                  <td>
                    {row.topPaths.length === 0 ? (
                      <span class="muted">–</span>
                    ) : (
                      <button
                        type="button"
                        class="secondary small"
                        aria-expanded={expanded}
                        aria-controls={panelId}
                        aria-label={`Top paths of ${row.crawler}`}
                        onClick={() => setOpen(expanded ? null : row.crawler)}
                      >
                        {expanded ? 'Hide' : `${row.topPaths.length} ${row.topPaths.length === 1 ? 'path' : 'paths'}`}
                      </button>
                    )}
                  </td>
                </tr>
                {expanded && (
                  <tr id={panelId} class="details-row">
                    <td colSpan={columns}>
                      <table aria-label={`Top paths of ${row.crawler}`}>
                        <thead>
                          <tr>
                            <th>Path</th>
                            <th class="num">Requests</th>
                            <th>Verified</th>
                          </tr>
                        </thead>
                        <tbody>
                          {row.topPaths.map((path) => (
                            <tr key={`${path.verified}:${path.path}`}>
                              <td>
                                <code>{terminalSafe(path.path)}</code>
                              </td>
                              <td class="num">{path.requests}</td>
                              {/* Any client can send a crawler's name: only a verified one is surely it. */}
                              <td class={path.verified ? undefined : 'muted'}>{path.verified ? 'yes' : 'no'}</td>
                            </tr>
                          ))}
                        </tbody>
                      </table>
                    </td>
                  </tr>
                )}
              </Fragment>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
