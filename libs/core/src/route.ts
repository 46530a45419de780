/*
 * Price what is served (the middleware's gate, and POST /v1/gates for other middleware), and tell
 * which request targets a token bound to a path may open. Rules match core's requestPath() spelling exactly, but routers are more
 * lenient: Express by default serves /PREMIUM/a and /premium/a/ from the /premium/:id route,
 * static file servers decode %2F into a new segment, Fastify can cut the path at ";", and few routers
 * resolve dot segments the way requestPath() does. So a request is charged the highest price of
 * every spelling its router may treat as the same route:
 *
 *   - the path, the path cut at the first ";" (Fastify's useSemicolonDelimiter), and the path with
 *     each segment's ";…" dropped (Tomcat, Jetty and Spring's matrix parameters), also where a
 *     decoding proxy in front made a ";" of a "%3B";
 *   - with %2F and %5C read as "/" (express.static, @fastify/static);
 *   - each priced twice: as written, and as the router keys it, against rules keyed the same way
 *     (lower-cased unless the router is known to be case-sensitive, a trailing slash dropped unless
 *     it is known to be strict), so /PREMIUM/a/ pays /premium/*'s price and /free/x/ is still free
 *     to a lenient router;
 *   - each also as every URL a static file server serves the same file under, where a rule names
 *     one (static-files.ts: "dir/", "dir" and "dir/index.html"; "report" and "report.html" where
 *     extensions are tried);
 *   - a target with a dot segment ("/a/../b", "/a/.", "%2e%2e"), a raw backslash, or an absolute
 *     form that URL parsers read apart ("http:///premium/a": the path /premium/a to Express, host
 *     "premium" and path /a to the WHATWG parser) is priced at the site's highest price: no client
 *     sends one (HTTP clients resolve dot segments and send a path), and routers disagree on them;
 *   - each also as the file a Windows server opens for it (a segment's trailing dots and spaces
 *     dropped, an NTFS stream name ("::$DATA") cut off, the name ended at a NUL: "report.html." is
 *     report.html there). Only priced so: the target still reads one way, and a token bound to it
 *     opens it (every gate for it cost at least report.html's price).
 *
 * A path is always free only if every spelling of it is.
 */

import { withinSteps } from './glob';
import { isCanonicalPath, requestPath } from './request-path';
import type { RoutingOptions } from './route-key';
import { priceOfSpelling, type SitePrices } from './site-prices';
import { DEFAULT_STATIC_FILES, staticFileSpellings, type StaticFiles } from './static-files';

// A segment of one or two dots, ended by a separator, the end, or a ";" a router may cut at.
const DOT_SEGMENT = /(?:^|[/\\])\.{1,2}(?:[/\\;]|$)/;
const ESCAPED_SEPARATOR = /%(?:2f|5c)/gi;
const ESCAPED_DOT = /%2e/gi;
/**
 * A raw control character, space or DEL: the URL parser drops tabs and line breaks anywhere (".\t."
 * is ".." to it) and trims the others at the ends, where routers match them as written. Node's HTTP
 * parser refuses them; a server in front that passes them on would not.
 */
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const RAW_CONTROL = /[\x00-\x20\x7f]/;
/**
 * A raw no-break space or byte order mark ending the target, which Node's legacy url.parse trims:
 * Express's parseurl hands it such a target, so Express on a runtime whose HTTP parser takes the
 * byte (Node 20's refuses it) would route "/docs/report.html\xa0" as "/docs/report.html". Only at
 * the end: within a path it stays (and a latin1 reading of UTF-8's "à" holds one).
 */
const TRIMMED_END = /[\xa0\ufeff]$/;
/** Whether a spelling may name a file a Windows server knows by another name (windowsFileName). */
const WINDOWS_ALIAS_HINT = /[. ](?:\/|$)|:|%00/;
/** A segment's ";…" parameters, as Tomcat, Jetty and Spring drop them. */
const SEGMENT_PARAMETERS = /;[^/]*/g;

/** A request target read every way a router may read it. */
export interface Route {
  /** core's requestPath(): the path a gate and a token bind to. */
  path: string;
  /** path, and the spellings a lenient router may take for the same route. */
  spellings: readonly string[];
  /** Routers may read the target apart from the gate (a dot segment, a raw "\\", a doubled "/", an odd absolute form): priced at the site's highest price, never free, never opened by a token. */
  odd: boolean;
}

/** Reads a request target (path and query, or an absolute URL). */
export function readRoute(target: string): Route {
  return plainRoute(target) ?? spelledRoute(target);
}

/**
 * An http(s) URL's scheme and authority when the authority is a bare host (name or bracketed IP
 * literal) and port, followed by "/": every parser of URLs (WHATWG's, Node's legacy url.parse that
 * Express routes by, rawPath()) then ends it at the same "/". Other absolute targets ("http:///x",
 * "http://@/x", "file://a:/x") are read differently by each: a host "x" to one, the path /x to another.
 */
const HTTP_ORIGIN = /^https?:\/\/([A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?(?=\/)/i;
const parsedAuthorities = new Map<string, boolean>();
const MAX_PARSED_AUTHORITIES = 64;
const SLASH = 0x2f;
/** The http(s) origin plainRoute last accepted. */
let lastOrigin: string | undefined;

/**
 * Most targets, read with no work: a canonical path with no `;` (no dot segment, escape or
 * parameter: every router reads it one way), alone as Node servers pass it, or after an http(s)
 * origin whose host the URL parser takes, as fetch runtimes pass Request.url. Anything else: undefined.
 */
function plainRoute(target: string): Route | undefined {
  let path = target;
  if (!target.startsWith('/')) {
    // A server sees the same origin again and again: the last one accepted is checked first.
    if (lastOrigin !== undefined && target.startsWith(lastOrigin) && target.charCodeAt(lastOrigin.length) === SLASH) {
      path = target.slice(lastOrigin.length);
    } else {
      const origin = plainOrigin(target);
      if (!origin) return undefined;
      lastOrigin = origin[0];
      path = target.slice(origin[0].length);
    }
  }
  return isCanonicalPath(path) && !path.includes(';') ? { path, spellings: [path], odd: false } : undefined;
}

/** The target's http(s) origin when it is one every parser reads alike (HTTP_ORIGIN) and the URL parser takes its host. */
function plainOrigin(target: string): RegExpExecArray | undefined {
  const origin = HTTP_ORIGIN.exec(target);
  return origin && parsesAsAuthority(origin[0].slice(origin[0].indexOf('//') + 2)) ? origin : undefined;
}

/** Whether the URL parser takes `authority` as a host (and port): if not, requestPath reads the URL as text. */
function parsesAsAuthority(authority: string): boolean {
  let parses = parsedAuthorities.get(authority);
  if (parses === undefined) {
    parses = canParse(`http://${authority}/`);
    if (parsedAuthorities.size >= MAX_PARSED_AUTHORITIES) parsedAuthorities.clear();
    parsedAuthorities.set(authority, parses);
  }
  return parses;
}

// URL.canParse is missing from older edge runtimes.
function canParse(url: string): boolean {
  try {
    new URL(url);
    return true;
  } catch {
    return false;
  }
}

/** readRoute's reading of any target: every spelling a router may take for it. */
export function spelledRoute(target: string): Route {
  const path = requestPath(target);
  const raw = rawPath(target);
  const separated = raw.replace(ESCAPED_SEPARATOR, '/');
  // Read one way by the gate and another by the router: a raw "\\" (a "/" to the URL parser, a
  // character to Express and Fastify) or an absolute target parsers disagree on.
  const odd =
    DOT_SEGMENT.test(separated.replace(ESCAPED_DOT, '.')) ||
    // A "..;" left in the decoded path: a server that drops ";…" then resolves it.
    DOT_SEGMENT.test(path) ||
    raw.includes('\\') ||
    RAW_CONTROL.test(raw) ||
    TRIMMED_END.test(target) ||
    // "//free/x": a path to the gate ("/free/x"), a host "free" and the path "/x" to an app reading
    // it as Node's documentation shows, new URL(req.url, base); "/blog//free/x" too, to a router
    // mounted at /blog (it is handed "//free/x").
    raw.includes('//') ||
    (!target.startsWith('/') && !plainOrigin(target));
  const spellings = new Set([path]);
  if (separated !== raw) spellings.add(requestPath(separated));
  // Matrix parameters, read from the path as written, with escaped slashes as "/", and decoded (a
  // proxy in front may have turned a "%3B" into a ";").
  for (const base of new Set([raw, separated, path])) {
    const semicolon = base.indexOf(';');
    if (semicolon < 0) continue;
    spellings.add(requestPath(base.slice(0, semicolon) || '/'));
    spellings.add(requestPath(base.replace(SEGMENT_PARAMETERS, '') || '/'));
  }
  return { path, spellings: [...spellings], odd };
}

/**
 * The request's route, read from its URL and, when a rewrite before the gate changed what the
 * router routes by, from that too: every spelling of both, bound to the URL as written.
 */
export function routeOf(request: { url: string; routedUrl?: string }): Route {
  const route = readRoute(request.url);
  if (request.routedUrl === undefined || request.routedUrl === request.url) return route;
  const routed = readRoute(request.routedUrl);
  // Express gives a mount path's root as "/": "/blog" routed as "/blog/" is the same route.
  if (routed.odd === route.odd && withoutTrailingSlash(routed.path) === withoutTrailingSlash(route.path)) return route;
  return {
    path: route.path,
    spellings: [...new Set([...route.spellings, ...routed.spellings])],
    odd: route.odd || routed.odd,
  };
}

const withoutTrailingSlash = (path: string) => (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path);

/**
 * A target every router reads as route.path alone: no dot segment, no ";" cut or escaped slash
 * giving another path. Only such a target is opened by a token or a sign-in bound to route.path;
 * the others are paid for each time (their price is the highest of their readings).
 */
export function isPlainRoute(route: Route): boolean {
  return !route.odd && route.spellings.length === 1;
}

/**
 * The most matcher steps (glob.ts) pricing one request may take: a few milliseconds. A site's
 * wildcard rules are tried on every path, each reading its segment, for each spelling and keying:
 * 1,000 of them against a 2,000-character path took half a second.
 */
export const MAX_PRICING_STEPS = 2_000_000;

/**
 * The price of serving the route: the highest of its spellings', as written and as the router keys
 * them; 0n is free. A route whose lookups would take more than MAX_PRICING_STEPS is priced at the
 * site's highest price, which no full lookup exceeds.
 */
export function priceRoute(
  prices: SitePrices,
  route: Route,
  routing: RoutingOptions,
  staticFiles: Required<StaticFiles> = DEFAULT_STATIC_FILES,
): bigint {
  if (route.odd) return prices.highest;
  const priced = withWindowsFileNames(route);
  // The static files' URLs within a budget of their own: they would otherwise leave an honest long
  // path, on a site of many wildcard rules, less of the budget than it had (priced the highest).
  const written = withinSteps(MAX_PRICING_STEPS, () => priceOfSpellings(prices, priced, routing));
  if (written === undefined || written === prices.highest) return prices.highest;
  const served = withinSteps(MAX_PRICING_STEPS, () => priceOfStaticFiles(prices, priced, routing, staticFiles));
  return served === undefined ? prices.highest : max(written, served);
}

/** The route with, beside its spellings, the files a Windows server opens for them (priced, never bound). */
function withWindowsFileNames(route: Route): Route {
  if (!route.spellings.some((spelling) => WINDOWS_ALIAS_HINT.test(spelling))) return route;
  const spellings = new Set(route.spellings);
  for (const spelling of route.spellings) spellings.add(windowsFileName(spelling));
  return { ...route, spellings: [...spellings] };
}

/**
 * The file a Windows server opens for `spelling`, in one pass (the work stays linear in the target):
 * the spelling up to its first NUL (kept escaped by requestPath(); a server in C ends the name there),
 * each segment up to its first ":" (an NTFS stream of it: "::$DATA" is the file's content,
 * "::$INDEX_ALLOCATION" a folder's) and without the dots and spaces Win32 drops from its end.
 */
export function windowsFileName(spelling: string): string {
  const nul = spelling.indexOf('%00');
  const name = nul < 0 ? spelling : spelling.slice(0, nul);
  return name.split('/').map(windowsSegmentName).join('/') || '/';
}

function windowsSegmentName(segment: string): string {
  const colon = segment.indexOf(':');
  let end = colon < 0 ? segment.length : colon;
  while (end > 0 && (segment[end - 1] === '.' || segment[end - 1] === ' ')) end--;
  return segment.slice(0, end);
}

function priceOfSpellings(prices: SitePrices, route: Route, routing: RoutingOptions): bigint {
  let micros = 0n;
  for (const spelling of route.spellings) micros = max(micros, priceOfSpelling(prices, spelling, routing));
  return micros;
}

/**
 * What a static file server serves under a spelling it serves under others too (static-files.ts):
 * a rule pricing one of them prices this one. Only a rule: /free/x is not the default's because no
 * rule names /free/x/index.html.
 */
function priceOfStaticFiles(
  prices: SitePrices,
  route: Route,
  routing: RoutingOptions,
  staticFiles: Required<StaticFiles>,
): bigint {
  let micros = 0n;
  for (const spelling of route.spellings)
    for (const served of staticFileSpellings(spelling, staticFiles))
      if (prices.mayMatch(served))
        micros = max(micros, priceOfSpelling(prices, served, routing, { matchedOnly: true, withTwin: false }));
  return micros;
}

/** The path as the request wrote it: no query or fragment, no scheme or host. */
export function rawPath(target: string): string {
  let path = target;
  if (!target.startsWith('/')) {
    const afterScheme = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(target);
    path = afterScheme ? target.slice(afterScheme[0].length) : '/' + target;
  }
  const end = path.search(/[?#]/);
  return end < 0 ? path : path.slice(0, end);
}

const max = (a: bigint, b: bigint) => (a > b ? a : b);
