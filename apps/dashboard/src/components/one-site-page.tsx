import type { ComponentChildren } from 'preact';
import type { Site } from '@crawlgate/publisher';
import { routeHref, type Route } from '../routes';
import { NoSites } from './no-sites';
import { SitePicker } from './site-picker';

type SitePage = Extract<Route, { siteId: string | null }>['page'];

/**
 * A page about one site at a time: the site the fragment names (else the first one), and a picker
 * that changes the fragment, so the choice survives a reload and can be linked to.
 */
export function OneSitePage(props: {
  page: SitePage;
  title: string;
  sites: Site[];
  siteId: string | null;
  tools?: ComponentChildren;
  children(site: Site): ComponentChildren;
}) {
  const { page, title, sites } = props;
  const site = sites.find((s) => s.site_id === props.siteId) ?? sites[0];
  if (!site) return <NoSites title={title} />;
  return (
    <section>
      <h2>{title}</h2>
      <div class="toolbar">
        <SitePicker
          sites={sites}
          value={site.site_id}
          onChange={(id) => (location.hash = routeHref({ page, siteId: id }))}
        />
        {props.tools}
      </div>
      {props.children(site)}
    </section>
  );
}
