/*
 * A site's prices as every server that sells its pages reads them: the rules as written, and the
 * rules keyed the way a lenient router keys paths (route-key.ts), so a spelling a router serves as
 * the same route (/PREMIUM/a, /premium/a/) is never priced below the route it reaches. The
 * middleware prices each request with them, and the API each gate it takes a payment for, so both
 * agree on what a path costs.
 */

import {
  compilePriceTable,
  NEGATED_CLASS,
  patternsHeapBytes,
  type PriceMatch,
  type PriceRule,
  type PriceTable,
} from './glob';
import { dottedIExpanded, type CaseReading } from './case-fold';
import { keyings, pathKey, patternKey, type RoutingOptions } from './route-key';

export interface SitePrices {
  readonly exact: PriceTable;
  /** The highest price of the site: a rule's or the default. */
  readonly highest: bigint;
  /**
   * The rules keyed as a router with these options keys paths (built on first use); with
   * `expandDottedI`, "İ" as Fastify's router reads it ("i" and a combining dot above).
   */
  keyed(routing: Required<RoutingOptions>, expandDottedI?: boolean): PriceTable;
  /**
   * Whether some rule may match `path` as written or keyed by any router: one with as many
   * segments ("*", "?" and classes never match a "/"; a trailing slash aside, which keying drops,
   * and which a rule's last "*" may stand for).
   */
  mayMatch(path: string): boolean;
  /** About the bytes its tables keep on the heap, the keyed ones built so far included (PriceTable.heapBytes). */
  heapBytes(): number;
}

/** A path's or pattern's number of "/", one at its end not counted: equal for any path a pattern matches. */
function depthOf(path: string): number {
  let slashes = 0;
  for (let i = 0; i < path.length; i++) if (path.charCodeAt(i) === 0x2f) slashes++;
  return path.length > 1 && path.endsWith('/') ? slashes - 1 : slashes;
}

/** `onTableBuilt`: told when a keyed table is built, so a cache weighing the prices (heapBytes) can weigh them again. */
export function compileSitePrices(
  rules: readonly PriceRule[],
  defaultMicros: bigint,
  onTableBuilt?: () => void,
): SitePrices {
  const exact = compilePriceTable(rules, defaultMicros);
  const keyedTables = new Map<string, PriceTable>();
  const depths = new Set(rules.map((rule) => depthOf(rule.pattern)));
  return {
    exact,
    // "/a/*" matches "/a/" ("*" may match nothing): a path ending in "/" may meet a rule one deeper.
    mayMatch: (path) => depths.has(depthOf(path)) || (path.endsWith('/') && depths.has(depthOf(path) + 1)),
    highest: rules.reduce((max, rule) => (rule.micros > max ? rule.micros : max), defaultMicros),
    heapBytes: () => [...keyedTables.values()].reduce((bytes, table) => bytes + table.heapBytes, exact.heapBytes),
    keyed(routing, expandDottedI = false) {
      const name = `${routing.caseSensitive}${routing.strictTrailingSlash}${expandDottedI}`;
      let table = keyedTables.get(name);
      if (!table) {
        const keyedRules = rules.map((rule) => ({ pattern: patternKey(rule.pattern, routing), micros: rule.micros }));
        const read = (classes?: CaseReading) =>
          compilePriceTable(keyedRules, defaultMicros, classes && { classes, expandDottedI });
        // The two readings of a class differ only when negated (case-fold.ts): both, the higher price.
        table = routing.caseSensitive
          ? read()
          : rules.some((rule) => NEGATED_CLASS.test(rule.pattern))
            ? higherOf(read('any-spelling'), read('regexp'))
            : read('any-spelling');
        keyedTables.set(name, table);
        onTableBuilt?.();
      }
      return table;
    },
  };
}

/**
 * About the most the prices of `patterns` take compiled: the table as written (patternsHeapBytes)
 * times the tables keying builds (keyed(): a case-sensitive one, and for each of the two case-folding
 * keyings one with "İ" read as one character and one as two, each of those two tables when a class
 * is negated), weighed no further once past `limit`.
 */
export function sitePricesHeapBytes(patterns: readonly string[], limit = Infinity): number {
  const tables = tablesOf(patterns);
  return tables * patternsHeapBytes(patterns, limit / tables);
}

/** How many tables the prices of `patterns` may build, the one as written included (sitePricesHeapBytes). */
export const tablesOf = (patterns: readonly string[]): number =>
  2 + 4 * (patterns.some((pattern) => NEGATED_CLASS.test(pattern)) ? 2 : 1);

/** The higher-priced match (on a tie, one that matched a rule). */
const higher = (x: PriceMatch, y: PriceMatch) =>
  y.micros > x.micros || (y.micros === x.micros && x.rule === null) ? y : x;

/** One table pricing each path at the higher of two tables' matches (on a tie, one that matched a rule). */
function higherOf(a: PriceTable, b: PriceTable): PriceTable {
  return {
    size: a.size,
    heapBytes: a.heapBytes + b.heapBytes,
    resolve: (url) => higher(a.resolve(url), b.resolve(url)),
    resolvePath: (path) => higher(a.resolvePath(path), b.resolvePath(path)),
  };
}

/**
 * The price of one path as requestPath() spells it, priced as it is (never read again): the
 * highest of its rule as written and as each router `routing` allows keys it (an unknown option
 * both ways). 0n is free. `matchedOnly`: a reading no rule matches counts nothing (not the default);
 * `withTwin: false`: the path with or without its trailing slash is not read (the caller reads it).
 */
export function priceOfSpelling(
  prices: SitePrices,
  path: string,
  routing: RoutingOptions = {},
  { matchedOnly = false, withTwin = true } = {},
): bigint {
  let micros = 0n;
  for (const keying of [EXACT, ...keyings(routing)]) {
    const match = reading(prices, path, keying);
    if (!matchedOnly || match.rule !== null) micros = max(micros, match.micros);
  }
  // Routers serve some routes with and without the trailing slash, strict ones included: a lenient
  // router any route, a Fastify prefix its "/" route, Hono's "/a/*" /a, Express a mount's root. So
  // a rule pricing the other spelling (as "/a/*" prices /a/) prices this one too. Only a rule that
  // matches counts here: /free/x/ matching none does not make /free/x cost the default.
  const other = path.endsWith('/') ? path.slice(0, -1) : `${path}/`;
  if (other === '' || !withTwin) return micros;
  for (const keying of [EXACT, ...keyings({ ...routing, strictTrailingSlash: true })]) {
    const match = reading(prices, other, keying);
    if (match.rule !== null) micros = max(micros, match.micros);
  }
  return micros;
}

/** The keying of a router strict both ways: the rules and the path as written. */
const EXACT = { caseSensitive: true, strictTrailingSlash: true } as const;

/** `path`'s match among the rules as a router with `keying` keys both. */
function reading(prices: SitePrices, path: string, keying: Required<RoutingOptions>): PriceMatch {
  if (keying === EXACT) return prices.exact.resolvePath(path);
  const key = pathKey(path, keying);
  const match = prices.keyed(keying).resolvePath(key);
  if (keying.caseSensitive || !(key.includes('\u0130') || key.includes('\u0307'))) return match;
  // Express keeps "İ" one letter; Fastify lower-cases whole paths, "İ" becoming "i" and a combining dot.
  return higher(match, prices.keyed(keying, true).resolvePath(dottedIExpanded(key)));
}

const max = (a: bigint, b: bigint) => (a > b ? a : b);
