/** The dashboard's pages, addressed by the URL fragment (#/sites), so the API serves one file. */
export type Route =
  | { page: 'overview' }
  | { page: 'sites' }
  | { page: 'pricing'; siteId: string | null }
  | { page: 'payments'; siteId: string | null }
  | { page: 'crawlers'; siteId: string | null }
  | { page: 'settings' };

export const PAGES = ['overview', 'sites', 'pricing', 'payments', 'crawlers', 'settings'] as const;

/** "#/pricing/<site id>" → { page: 'pricing', siteId }. Anything unknown is the overview. */
export function parseRoute(hash: string): Route {
  const [page, siteId = null] = hash.replace(/^#\/?/, '').split('/').map(decodeSegment);
  switch (page) {
    case 'sites':
      return { page: 'sites' };
    case 'pricing':
    case 'payments':
    case 'crawlers':
      return { page, siteId: siteId || null };
    case 'settings':
      return { page: 'settings' };
    default:
      return { page: 'overview' };
  }
}

export function routeHref(route: Route): string {
  const siteId = 'siteId' in route && route.siteId ? `/${encodeURIComponent(route.siteId)}` : '';
  return `#/${route.page}${siteId}`;
}

/** A page's own link, with no site chosen (a page on one site then shows the first). */
export function pageHref(page: Route['page']): string {
  return `#/${page}`;
}

/** A hand-typed fragment may hold a broken escape (#/pricing/%E0): keep it as typed rather than fail. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
