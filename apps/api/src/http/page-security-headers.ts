/*
 * Headers of the HTML pages this origin serves (the dashboard, the API docs): the dashboard's tab
 * holds the publisher's key, so no page of this origin may run script from elsewhere or inline,
 * nor be framed by another site, nor be steered by the page that opened it.
 */

/** The directives every page shares; `style` is the page's style-src sources. */
function contentSecurityPolicy(style: string): string {
  return `default-src 'self'; script-src 'self'; style-src ${style}; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`;
}

function pageSecurityHeaders(style: string): Readonly<Record<string, string>> {
  return {
    'content-security-policy': contentSecurityPolicy(style),
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    // A page that opened this one (window.open) gets no handle on its tab to send it elsewhere later.
    'cross-origin-opener-policy': 'same-origin',
  };
}

/** The dashboard: its styles are files of its own build. */
export const DASHBOARD_PAGE_HEADERS = pageSecurityHeaders("'self'");

/** Swagger UI sets style attributes from its script, which a style-src without 'unsafe-inline' would block. */
export const DOCS_PAGE_HEADERS = pageSecurityHeaders("'self' 'unsafe-inline'");
