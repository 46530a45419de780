/*
 * Paths no bot ever pays for: how a site describes itself to crawlers (robots.txt, sitemaps),
 * the well-known documents (security.txt, pay.json: a bot must be able to read the prices before
 * paying), llms.txt (the index a site offers agents) and the favicon. As with Cloudflare's pay per
 * crawl, charging for these would only make bots blind to the rules.
 *
 * Under /.well-known/ only documents named here are free, each one segment, not the prefix: a router
 * that binds a first segment to a parameter (`/:locale/...`, `/:section/:year/:slug`) answers
 * /.well-known/big-story or /.well-known/acme-challenge/big-story with a page of its own, which a
 * free prefix gave away. Nothing with a segment the visitor chooses is free, ACME's HTTP-01
 * challenges included (answer them before the gate). A site frees another document with a price
 * rule of 0.
 */

import { readRoute, type Route } from '@crawlgate/core';

/** The /.well-known/ documents (RFC 8615) a crawler or an agent reads: each one segment, by its name. */
const WELL_KNOWN_DOCUMENTS: readonly string[] = [
  'security.txt', // RFC 9116
  'pay.json', // this gate's prices
  'http-message-signatures-directory', // Web Bot Auth key directories
  'tdmrep.json', // TDM Reservation Protocol: text-and-data-mining rights
  'gpc.json', // Global Privacy Control
  'trust.txt',
  'ai-plugin.json',
  'agent-card.json', // A2A agent cards
  'agent.json',
  'openid-configuration',
  'oauth-authorization-server',
  'oauth-protected-resource',
  'jwks.json',
  'apple-app-site-association',
  'assetlinks.json',
  'change-password',
  'host-meta',
  'host-meta.json',
  'webfinger',
  'nodeinfo',
  'mta-sts.txt',
  'traffic-advice',
  'api-catalog', // RFC 9727
];
/**
 * The names sitemap plugins put before "-sitemap": WordPress core's wp-sitemap.xml; the ones Yoast's
 * and Rank Math's sitemap_index.xml lists (post-sitemap.xml, page-sitemap2.xml); news and media
 * sitemaps. Only these: any other text before "-sitemap" may be an article's id or slug to a route
 * such as "/:id-:slug" ("/12345-sitemap.xml" is article 12345 there).
 */
const SITEMAP_PREFIXES = [
  'wp',
  'post',
  'page',
  'category',
  'post_tag',
  'author',
  'news',
  'video',
  'image',
  'product',
  'product_cat',
  'product_tag',
] as const;

/**
 * The words a sitemap's name may carry after "sitemap" (sitemap-posts.xml, sitemap_index.xml). No
 * number after them: "/sitemap-posts-12345.xml" is article 12345 to a route such as "/:slug-:id.xml".
 */
const SITEMAP_WORDS = [
  'index',
  'posts',
  'post',
  'pages',
  'page',
  'taxonomies',
  'category',
  'categories',
  'tags',
  'users',
  'authors',
  'news',
  'video',
  'videos',
  'image',
  'images',
  'products',
] as const;

/**
 * The free sitemaps as globs, for pay.json: the common names only, a subset of what the gate
 * frees (a glob's "*" would also cover names the gate charges).
 */
const SITEMAP_GLOBS = [
  '/sitemap.xml',
  '/sitemap_index.xml',
  '/sitemap-index.xml',
  ...SITEMAP_PREFIXES.map((name) => `/${name}-sitemap.xml`),
];

/** The same set as globs, for pay.json: `*` stays within one path segment. */
export const ALWAYS_FREE_PATHS: readonly string[] = Object.freeze([
  '/robots.txt',
  ...SITEMAP_GLOBS,
  ...WELL_KNOWN_DOCUMENTS.map((name) => `/.well-known/${name}`),
  '/security.txt',
  '/favicon.ico',
  '/llms.txt',
]);

// llms.txt: the Markdown index a site offers agents (llmstxt.org), like a sitemap.
const FREE_FILES = new Set([
  '/robots.txt',
  '/security.txt',
  '/favicon.ico',
  '/llms.txt',
  ...WELL_KNOWN_DOCUMENTS.map((name) => `/.well-known/${name}`),
]);
// sitemap.xml, sitemap1.xml, sitemap_index.xml, sitemap-posts.xml; the plugins' names above, post-sitemap.xml,
// page-sitemap2.xml. A number only straight after "sitemap": after a separator it is an article's id to a route
// such as "/:slug-:id" ("/sitemap-12345.xml", "/sitemap-posts-12345.xml"; so WordPress core's
// wp-sitemap-posts-post-1.xml is charged: free it with a rule of 0).
const SITEMAP = new RegExp(
  `^/(?:(?:${SITEMAP_PREFIXES.join('|')})-)?sitemap(?:\\d+|(?:[-_](?:${SITEMAP_WORDS.join('|')}))+)?\\.xml$`,
);

/**
 * True for the free paths above. Takes the request target as received (path and query, or a full
 * URL) and reads it as the gate does (core's readRoute): every spelling a router may take for it
 * must be free, and a target routers read apart from the gate ("/.well-known/../premium",
 * "//robots.txt") is not. Matching is case-sensitive, as robots.txt's location is.
 */
export function isAlwaysFreePath(path: string): boolean {
  return isAlwaysFreeRoute(readRoute(path));
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
  return FREE_FILES.has(path) || SITEMAP.test(path);
}

/** Never charged: every spelling (each as requestPath() read it) is an always-free path (robots.txt, security.txt, ...). */
export function isAlwaysFreeRoute(route: Route): boolean {
  return !route.odd && route.spellings.every(isFreeRequestPath);
}
