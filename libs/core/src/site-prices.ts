/*
 * A site's prices as every server that sells its pages reads them: the rules as written, and the
 * rules keyed the way a lenient router keys paths (lower-cased, a trailing slash dropped), so a
 * spelling a router serves as the same route (/PREMIUM/a, /premium/a/) is never priced below the
 * route it reaches. The middleware prices each request with them, and the API each gate it takes
 * a payment for, so both agree on what a path costs.
 */

import { compilePriceTable, type PriceRule, type PriceTable } from './glob';

/** What a server knows of its router. Unknown (undefined) is read as lenient: the conservative choice. */
export interface RoutingOptions {
  /** true: /PREMIUM/a is not /premium/a to the router. */
  caseSensitive?: boolean;
  /** true: /premium/a/ is not /premium/a to the router. */
  strictTrailingSlash?: boolean;
}

export interface SitePrices {
  readonly exact: PriceTable;
  /** The highest price of the site: a rule's or the default. */
  readonly highest: bigint;
  /** The rules keyed as a router with these options keys paths (built on first use). */
  keyed(routing: RoutingOptions): PriceTable;
}

export function compileSitePrices(rules: readonly PriceRule[], defaultMicros: bigint): SitePrices {
  const exact = compilePriceTable(rules, defaultMicros);
  const keyedTables = new Map<string, PriceTable>();
  return {
    exact,
    highest: rules.reduce((max, rule) => (rule.micros > max ? rule.micros : max), defaultMicros),
    keyed(routing) {
      const name = `${routing.caseSensitive === true}${routing.strictTrailingSlash === true}`;
      let table = keyedTables.get(name);
      if (!table) {
        table = compilePriceTable(
          rules.map((rule) => ({ pattern: routeKey(rule.pattern, routing), micros: rule.micros })),
          defaultMicros,
        );
        keyedTables.set(name, table);
      }
      return table;
    },
  };
}

/**
 * The price of one path as requestPath() spells it, priced as it is (never read again): the
 * higher of its rule as written and, unless the router is known to be strict, its rule as the
 * router keys it. 0n is free.
 */
export function priceOfSpelling(prices: SitePrices, path: string, routing: RoutingOptions = {}): bigint {
  const exact = prices.exact.resolvePath(path).micros;
  if (routing.caseSensitive && routing.strictTrailingSlash) return exact;
  const keyed = prices.keyed(routing).resolvePath(routeKey(path, routing)).micros;
  return keyed > exact ? keyed : exact;
}

/** A path (or a rule's pattern) as the router keys it: lower-cased unless case-sensitive, no trailing slash unless strict. */
function routeKey(path: string, routing: RoutingOptions): string {
  const cased = routing.caseSensitive ? path : path.toLowerCase();
  return routing.strictTrailingSlash || cased.length <= 1 || !cased.endsWith('/') ? cased : cased.slice(0, -1);
}
