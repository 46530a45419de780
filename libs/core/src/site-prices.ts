/*
 * A site's prices as every server that sells its pages reads them: the rules as written, and the
 * rules keyed the way a lenient router keys paths (route-key.ts), so a spelling a router serves as
 * the same route (/PREMIUM/a, /premium/a/) is never priced below the route it reaches. The
 * middleware prices each request with them, and the API each gate it takes a payment for, so both
 * agree on what a path costs.
 */

import { compilePriceTable, type PriceMatch, type PriceRule, type PriceTable } from './glob';
import { keyings, pathKey, patternKey, type RoutingOptions } from './route-key';

export interface SitePrices {
  readonly exact: PriceTable;
  /** The highest price of the site: a rule's or the default. */
  readonly highest: bigint;
  /** The rules keyed as a router with these options keys paths (built on first use). */
  keyed(routing: Required<RoutingOptions>): PriceTable;
}

export function compileSitePrices(rules: readonly PriceRule[], defaultMicros: bigint): SitePrices {
  const exact = compilePriceTable(rules, defaultMicros);
  const keyedTables = new Map<string, PriceTable>();
  return {
    exact,
    highest: rules.reduce((max, rule) => (rule.micros > max ? rule.micros : max), defaultMicros),
    keyed(routing) {
      const name = `${routing.caseSensitive}${routing.strictTrailingSlash}`;
      let table = keyedTables.get(name);
      if (!table) {
        table = compilePriceTable(
          rules.map((rule) => ({ pattern: patternKey(rule.pattern, routing), micros: rule.micros })),
          defaultMicros,
          { caseClosedClasses: !routing.caseSensitive },
        );
        keyedTables.set(name, table);
      }
      return table;
    },
  };
}

/**
 * The price of one path as requestPath() spells it, priced as it is (never read again): the
 * highest of its rule as written and as each router `routing` allows keys it (an unknown option
 * both ways). 0n is free.
 */
export function priceOfSpelling(prices: SitePrices, path: string, routing: RoutingOptions = {}): bigint {
  let micros = 0n;
  for (const keying of [EXACT, ...keyings(routing)]) micros = max(micros, reading(prices, path, keying).micros);
  // Routers serve some routes with and without the trailing slash, strict ones included: a lenient
  // router any route, a Fastify prefix its "/" route, Hono's "/a/*" /a, Express a mount's root. So
  // a rule pricing the other spelling (as "/a/*" prices /a/) prices this one too. Only a rule that
  // matches counts here: /free/x/ matching none does not make /free/x cost the default.
  const other = path.endsWith('/') ? path.slice(0, -1) : `${path}/`;
  if (other === '') return micros;
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
  return keying === EXACT ? prices.exact.resolvePath(path) : prices.keyed(keying).resolvePath(pathKey(path, keying));
}

const max = (a: bigint, b: bigint) => (a > b ? a : b);
