/*
 * A site's prices as every server that sells its pages reads them: the rules as written, and the
 * rules keyed the way a lenient router keys paths (route-key.ts), so a spelling a router serves as
 * the same route (/PREMIUM/a, /premium/a/) is never priced below the route it reaches. The
 * middleware prices each request with them, and the API each gate it takes a payment for, so both
 * agree on what a path costs.
 */

import { compilePriceTable, type PriceRule, type PriceTable } from './glob';
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
  let micros = prices.exact.resolvePath(path).micros;
  for (const keying of keyings(routing)) {
    const keyed = prices.keyed(keying).resolvePath(pathKey(path, keying)).micros;
    if (keyed > micros) micros = keyed;
  }
  // A router that ignores trailing slashes serves /a from a route of /a/ too: a rule pricing /a/
  // (as "/a/*" does) prices /a. Only a rule that matches counts here: /free/x/ matching none does
  // not make /free/x cost the default.
  if (routing.strictTrailingSlash === true || path.endsWith('/')) return micros;
  const slashed = `${path}/`;
  for (const keying of [
    { caseSensitive: true, strictTrailingSlash: true },
    ...keyings({ ...routing, strictTrailingSlash: true }),
  ]) {
    const table = keying.caseSensitive && keying.strictTrailingSlash ? prices.exact : prices.keyed(keying);
    const match = table.resolvePath(keying.caseSensitive ? slashed : pathKey(slashed, keying));
    if (match.rule !== null && match.micros > micros) micros = match.micros;
  }
  return micros;
}
