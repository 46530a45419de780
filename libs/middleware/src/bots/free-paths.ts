/*
 * Paths no bot ever pays for: how a site describes itself to crawlers (robots.txt, sitemaps),
 * the /.well-known/ documents (security.txt, pay.json: a bot must be able to read the prices
 * before paying), llms.txt (the index a site offers agents) and the favicon. As with Cloudflare's pay per crawl, charging for these would
 * only make bots blind to the rules.
 */

import { requestPath, type Route } from '@crawlgate/core';

/** The same set as globs, for pay.json: `*` stays within one path segment, `**` spans segments. */
export const ALWAYS_FREE_PATHS: readonly string[] = Object.freeze([
  '/robots.txt',
  '/sitemap*.xml',
  '/wp-sitemap*.xml',
  '/.well-known/**',
  '/security.txt',
  '/favicon.ico',
  '/llms.txt',
]);

// llms.txt: the Markdown index a site offers agents (llmstxt.org), like a sitemap.
const FREE_FILES = new Set(['/robots.txt', '/security.txt', '/favicon.ico', '/llms.txt']);
// sitemap.xml, sitemap_index.xml, sitemap-posts.xml; WordPress core's wp-sitemap.xml and wp-sitemap-posts-post-1.xml.
const SITEMAP = /^\/(?:wp-)?sitemap[^/]*\.xml$/;
const WELL_KNOWN = '/.well-known/';

/**
 * True for the free paths above. Takes the request target as received (path and query, or a full
 * URL) and reads it the way pricing does (core's requestPath: no query, "/a/../b" is "/b",
 * escapes decoded), so "/.well-known/../premium" is "/premium" and is not free. Matching is
 * case-sensitive, as robots.txt's location is.
 */
export function isAlwaysFreePath(path: string): boolean {
  return isFreeRequestPath(requestPath(path));
}

/**
 * The same, for a path requestPath() already read (a route's spellings). Not read again: its "?"
 * and "#" came from escapes ("/robots.txt%3Fx" is "/robots.txt?x", the page "robots.txt?x" to a
 * router), and a second reading would cut them off as a query or fragment and call it robots.txt.
 */
export function isFreeRequestPath(path: string): boolean {
  // An escape requestPath() left (an escaped "/" or "%") or a backslash means another file to a server
  // that decodes again or splits there ("/.well-known/..%2Fpaid.html" is paid.html to serve-static),
  // and no free file's name has one: never free.
  if (path.includes('%') || path.includes('\\')) return false;
  return FREE_FILES.has(path) || SITEMAP.test(path) || path.startsWith(WELL_KNOWN);
}

/** Never charged: every spelling (each as requestPath() read it) is an always-free path (robots.txt, /.well-known/, ...). */
export function isAlwaysFreeRoute(route: Route): boolean {
  return !route.odd && route.spellings.every(isFreeRequestPath);
}
