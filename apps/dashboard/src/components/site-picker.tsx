import type { Site } from '@crawlgate/publisher';

/** Chooses among the publisher's sites; `allLabel` adds an "every site" choice (value ""). */
export function SitePicker({
  sites,
  value,
  onChange,
  allLabel,
}: {
  sites: Site[];
  value: string;
  onChange(siteId: string): void;
  allLabel?: string;
}) {
  return (
    <label class="inline">
      Site{' '}
      <select value={value} onChange={(event) => onChange((event.target as HTMLSelectElement).value)}>
        {allLabel !== undefined && <option value="">{allLabel}</option>}
        {sites.map((site) => (
          <option key={site.site_id} value={site.site_id}>
            {site.name ? `${site.name} (${site.domain})` : site.domain}
          </option>
        ))}
      </select>
    </label>
  );
}
