/*
 * Licensing and usage signals: the RSL 1.0 license document (rslstandard.org/rsl) generated from the
 * site's pricing, the usage preferences the publisher sets (RSL <permits>/<prohibits>, Cloudflare's
 * Content-Signal, IETF AIPREF Content-Usage), and the `Link: rel="license"` header on 402s.
 *
 * The document lives at /license.xml by default: the path the RSL specification's examples and the
 * RSL tools use, so a crawler guessing finds it; robots.txt's `License:` line and the Link header
 * name it anyway. Publishers whose app serves its own /license.xml pick another path or false.
 *
 * How our price rules read in RSL: a rule is a <content> whose url is the pattern in robots.txt's
 * matching (RFC 9309). Our `*` stays within one path segment and `?` is one character; RFC 9309's
 * `*` spans segments and it has no `?`, so both become `*`: the license may name a scope a little
 * wider than the rule, never a narrower one. A pattern without wildcards ends in `$` (exact). The
 * default price is the <content> for "/". The 402 of each request stays the price that binds.
 */

import {
  decodePathEscapes,
  foldCase,
  formatMicrosUsd,
  MAX_PRICE_MICROS,
  parsePriceUsd,
  requestPath,
  type SiteOffer,
} from '@crawlgate/core';
import { notCharging, type Decision } from './decision';
import { robotsTxt } from './robots';

export const RSL_NAMESPACE = 'https://rslstandard.org/rsl';
export const RSL_MEDIA_TYPE = 'application/rsl+xml';
export const DEFAULT_LICENSE_PATH = '/license.xml';
const LICENSE_CACHE_SECONDS = 60;
const ROBOTS_PATH = '/robots.txt';

/** What the publisher lets crawlers do with the content; unset: no preference stated. */
export interface UsagePreferences {
  /** Building a search index and linking to the page. */
  search?: boolean;
  /** Feeding the content to an AI model as input (retrieval, grounding, answers). */
  aiInput?: boolean;
  /** Training or fine-tuning AI models. */
  aiTrain?: boolean;
}

export interface LicensingOptions {
  /** Where the gate serves the RSL license document; default "/license.xml". false: not served, and no Link header. */
  path?: string | false;
  /** Stated in the license (<permits>/<prohibits>), in robots.txt and in robotsTxt()'s lines. */
  usage?: UsagePreferences;
  /**
   * Set this when the app serves no /robots.txt: the gate then answers GET /robots.txt itself with
   * this text ('' for none) plus the License and usage lines (robots.ts). Unset: the app's own
   * robots.txt is served as it is; build it with robotsTxt().
   */
  robotsTxt?: string;
}

export interface Licensing {
  readonly path: string | undefined;
  readonly usage: UsagePreferences;
  /** The license's absolute URL on the site's domain; undefined when not served. */
  url(offer: SiteOffer): string | undefined;
  /** The RSL document for these terms; built once per pricing version and domain. */
  document(offer: SiteOffer): string;
  /** The gate's answer to GET/HEAD of the license path (and of /robots.txt when it serves it); undefined for any other request. */
  answer(method: string, path: string, offer: SiteOffer | undefined): Decision | undefined;
  /** The Link header naming the license, for 402 answers; empty when not served or not loaded. */
  linkHeader(offer: SiteOffer | undefined): Record<string, string>;
}

const USAGE_KEYS: readonly (keyof UsagePreferences)[] = ['search', 'aiInput', 'aiTrain'];
/** RSL 1.0's usage vocabulary for each preference. */
const RSL_USAGE: Record<keyof UsagePreferences, string> = {
  search: 'search',
  aiInput: 'ai-input',
  aiTrain: 'ai-train',
};
/** A path the router and requestPath() read the same way: no escapes, dot segments, doubled slashes or `;`. */
const PLAIN_PATH = /^\/(?:[A-Za-z0-9._~-]+\/?)*$/;

/** Checks the options; a TypeError names what is wrong. */
export function createLicensing(options: LicensingOptions = {}): Licensing {
  if (typeof options !== 'object' || options === null) throw new TypeError('licensing must be an object');
  const path = options.path === false ? undefined : (options.path ?? DEFAULT_LICENSE_PATH);
  if (
    path !== undefined &&
    (typeof path !== 'string' ||
      !PLAIN_PATH.test(path) ||
      /(?:^|\/)\.\.?(?:\/|$)/.test(path) ||
      requestPath(path) !== path)
  ) {
    throw new TypeError(
      `licensing.path must be false or a plain absolute path such as "${DEFAULT_LICENSE_PATH}" (letters, digits, "._~-" and "/")`,
    );
  }
  const usage = readUsage(options.usage);
  const robotsBase = options.robotsTxt;
  // Throws now, at start-up, for a base robotsTxt() refuses.
  if (robotsBase !== undefined) robotsTxt(robotsBase, { usage });
  let cached: { key: string; xml: string } | undefined;

  const url = (offer: SiteOffer) => (path === undefined ? undefined : `https://${offer.domain}${path}`);
  // Cached until the terms change: pricing_version increases with every pricing change.
  const document = (offer: SiteOffer) => {
    const key = `${offer.domain} ${offer.pricing_version}`;
    if (cached?.key !== key) cached = { key, xml: buildRslDocument(offer, usage) };
    return cached.xml;
  };
  // Built once per License URL, not per request: a base at its size limit takes milliseconds.
  let robotsCached: { licenseUrl: string | undefined; text: string } | undefined;
  const robots = (licenseUrl: string | undefined) => {
    if (!robotsCached || robotsCached.licenseUrl !== licenseUrl)
      robotsCached = { licenseUrl, text: robotsTxt(robotsBase!, { usage, licenseUrl }) };
    return robotsCached.text;
  };
  return {
    path,
    usage,
    url,
    document,
    answer(method, requested, offer) {
      if (robotsBase !== undefined && requested === ROBOTS_PATH && (method === 'GET' || method === 'HEAD')) {
        // Before the terms load, the usage lines alone: the License line needs the site's domain.
        const text = robots(offer && url(offer));
        return {
          kind: 'respond',
          status: 200,
          headers: {
            'content-type': 'text/plain; charset=utf-8',
            'cache-control': offer ? `public, max-age=${LICENSE_CACHE_SECONDS}` : 'no-store',
          },
          body: text,
        };
      }
      if (path === undefined || requested !== path || (method !== 'GET' && method !== 'HEAD')) return undefined;
      if (!offer) return notCharging("The site's license is not loaded yet; retry later", 30);
      return {
        kind: 'respond',
        status: 200,
        headers: {
          'content-type': `${RSL_MEDIA_TYPE}; charset=utf-8`,
          'cache-control': `public, max-age=${LICENSE_CACHE_SECONDS}`,
        },
        body: document(offer),
      };
    },
    linkHeader(offer): Record<string, string> {
      const href = offer && url(offer);
      return href ? { link: `<${href}>; rel="license"; type="${RSL_MEDIA_TYPE}"` } : {};
    },
  };
}

function readUsage(usage: unknown): UsagePreferences {
  if (usage === undefined) return {};
  if (typeof usage !== 'object' || usage === null)
    throw new TypeError('licensing.usage must be an object such as { search: true, aiInput: true, aiTrain: false }');
  const read: UsagePreferences = {};
  for (const [key, value] of Object.entries(usage)) {
    if (!USAGE_KEYS.includes(key as keyof UsagePreferences))
      throw new TypeError(`licensing.usage.${key} is unknown; use ${USAGE_KEYS.join(', ')}`);
    if (value === undefined) continue;
    if (typeof value !== 'boolean') throw new TypeError(`licensing.usage.${key} must be true or false`);
    read[key as keyof UsagePreferences] = value;
  }
  return read;
}

/**
 * The RSL 1.0 document of a site: one <content> per price rule in order, then the default price
 * for "/", each stating a price no path its scope covers is charged more than by the gate. RFC
 * 9309 reads the longest matching scope and widens our wildcards across segments; the gate takes
 * the first matching rule, else the default, over every spelling a router serves. So a scope
 * states the dearest of every rule that may overlap it, whatever its place, a wildcard scope and a
 * trailing-slash twin at least the default. A free rule whose pattern RFC 9309 can only write
 * wider is left out: its pages read as the scopes around it say, never cheaper than they are.
 */
export function buildRslDocument(offer: SiteOffer, usage: UsagePreferences = {}): string {
  const origin = `https://${offer.domain}`;
  const defaultMicros = micros(offer.default_price_usd);
  const rules = offer.rules.map((rule) => {
    const pattern = rslPattern(rule.path);
    return { pattern, micros: micros(rule.price_usd), reach: reachOf(pattern) };
  });
  // Every rule that may match a page the scope covers, whatever its place: the gate also charges a
  // page by the rule its trailing-slash twin or another letter case matches (core's priceOfSpelling).
  const stated = (rule: (typeof rules)[number]): bigint => {
    let dearest = rule.reach.exact ? rule.micros : max(rule.micros, defaultMicros);
    for (const other of rules) if (mayOverlap(rule.reach, other.reach)) dearest = max(dearest, other.micros);
    return dearest;
  };
  const scopes = [
    ...rules
      .filter((rule) => !(rule.micros === 0n && rule.pattern.includes('*')))
      .flatMap((rule, _, kept) => {
        const micros = stated(rule);
        // The trailing-slash twin the gate prices alike ("/a/*" prices /a too), where no rule states it.
        // A twin the rule does not match may fall to the default for a router strict about the slash.
        const twins = twinsOf(rule.pattern).filter((twin) => !kept.some((other) => other.pattern === twin));
        return [
          { url: origin + rule.pattern, micros },
          ...twins.map((twin) => ({ url: origin + twin, micros: max(micros, defaultMicros) })),
        ];
      }),
    { url: `${origin}/`, micros: defaultMicros },
  ];
  const terms = `${origin}/.well-known/pay.json`;
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>', `<rsl xmlns="${RSL_NAMESPACE}">`];
  for (const scope of scopes) {
    lines.push(
      `  <content url="${xmlEscape(scope.url)}">`,
      `    <terms>${xmlEscape(terms)}</terms>`,
      '    <license>',
      ...usageLines(usage),
      ...paymentLines(scope.micros),
      '    </license>',
      '  </content>',
    );
  }
  lines.push('</rsl>', '');
  return lines.join('\n');
}

/**
 * The exact paths a router serves as a pattern's own with or without a trailing slash, which the
 * gate prices alike (core's priceOfSpelling): "/a$" for "/a/$" and "/a/*", "/a/$" for "/a$".
 */
function twinsOf(pattern: string): string[] {
  if (pattern.endsWith('/$')) return pattern === '/$' ? [] : [`${pattern.slice(0, -2)}$`];
  if (pattern.endsWith('$')) return [`${pattern.slice(0, -1)}/$`];
  if (pattern.endsWith('/*') && pattern.indexOf('*') === pattern.length - 1 && pattern !== '/*')
    return [`${pattern.slice(0, -2)}$`];
  return [];
}

/** What of an RFC 9309 pattern (rslPattern's) says which paths it may match: see mayOverlap. */
interface Reach {
  exact: boolean;
  /** The text before its first "*" (all of it, for an exact one), as the gate may read it (foldings). */
  prefixes: string[];
}

function reachOf(pattern: string): Reach {
  const exact = !pattern.includes('*');
  return { exact, prefixes: foldings(exact ? pattern.slice(0, -1) : pattern.slice(0, pattern.indexOf('*'))) };
}

/**
 * Whether two patterns may match one path as the gate reads it: unless their prefixes, escapes
 * decoded and case folded (a lenient router's), rule it out. Never false for two that do.
 */
function mayOverlap(a: Reach, b: Reach): boolean {
  return a.prefixes.some((prefixA) =>
    b.prefixes.some((prefixB) => prefixesOverlap(prefixA, a.exact, prefixB, b.exact)),
  );
}

function prefixesOverlap(prefixA: string, exactA: boolean, prefixB: string, exactB: boolean): boolean {
  if (exactA && exactB) return prefixA === prefixB;
  if (exactA) return prefixA.startsWith(prefixB);
  if (exactB) return prefixB.startsWith(prefixA);
  return prefixA.startsWith(prefixB) || prefixB.startsWith(prefixA);
}

const max = (a: bigint, b: bigint) => (a > b ? a : b);

/**
 * A prefix as the gate compares paths: escapes decoded, case folded as core folds it ("ſ" is "s"),
 * "İ" read as one character and as two; its trailing slash dropped (a twin's).
 */
const foldings = (prefix: string): string[] => {
  const decoded = decodePathEscapes(prefix);
  return [...new Set([foldCase(decoded), foldCase(decoded, true)])].map((text) => text.replace(/\/$/, ''));
};

/** The API's price_usd, a decimal string ("0.01"), in micro-USD; an unreadable one the highest price, never a lower one. */
function micros(price: string): bigint {
  const parsed = parsePriceUsd(price);
  return parsed.ok ? parsed.micros : MAX_PRICE_MICROS;
}

function usageLines(usage: UsagePreferences): string[] {
  const tokens = (allowed: boolean) => USAGE_KEYS.filter((key) => usage[key] === allowed).map((key) => RSL_USAGE[key]);
  const lines: string[] = [];
  if (tokens(true).length > 0) lines.push(`      <permits type="usage">${tokens(true).join(' ')}</permits>`);
  if (tokens(false).length > 0) lines.push(`      <prohibits type="usage">${tokens(false).join(' ')}</prohibits>`);
  return lines;
}

function paymentLines(micros: bigint): string[] {
  if (micros === 0n) return ['      <payment type="free"/>'];
  return [
    '      <payment type="crawl">',
    `        <amount currency="USD">${formatMicrosUsd(micros)}</amount>`,
    '      </payment>',
  ];
}

/**
 * Our glob as an RFC 9309 pattern, which knows only `*` (any characters, "/" included) and a final
 * `$`: each wildcard of ours (`*`, `?`, a class `[...]`, an escaped `*`, which RFC 9309 cannot write
 * literally) widens to `*`; a literal `$`, `?` or control character is percent-escaped; an exact path ends in `$`.
 * Widened, it may cover paths the rule does not price (see buildRslDocument).
 */
export function rslPattern(glob: string): string {
  let pattern = '';
  const widen = () => {
    if (!pattern.endsWith('*')) pattern += '*';
  };
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*' || c === '?') widen();
    else if (c === '[') {
      i = classEnd(glob, i);
      widen();
    } else {
      const literal = c === '\\' ? glob[++i] : c;
      if (literal === undefined) break;
      if (literal === '*') widen();
      else pattern += literal === '$' ? '%24' : literal === '?' ? '%3F' : literal;
    }
  }
  const written = pattern.replace(NOT_XML, utf8Escaped);
  return written.includes('*') ? written : `${written}$`;
}

/**
 * What XML 1.0 cannot hold, even as a reference: control characters (a rule stored before the API
 * refused them), U+FFFE, U+FFFF and lone surrogates.
 */
const NOT_XML =
  // eslint-disable-next-line no-control-regex -- control characters are among what it finds
  /[\x00-\x1f\x7f\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** A UTF-16 code unit as the percent-escaped bytes UTF-8 writes it with, as a request path carries it ("%01"). */
function utf8Escaped(unit: string): string {
  const code = unit.charCodeAt(0);
  const bytes = code < 0x80 ? [code] : [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)];
  return bytes.map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
}

/** The index of the "]" closing the class that opens at glob[start], as core's glob reads it (escapes honoured). */
function classEnd(glob: string, start: number): number {
  let i = start + 1;
  if (glob[i] === '!' || glob[i] === '^') i++;
  for (; i < glob.length && glob[i] !== ']'; i++) if (glob[i] === '\\') i++;
  return i;
}

function xmlEscape(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}
