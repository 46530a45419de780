/*
 * Paths and rule patterns as a lenient router keys them: case folded unless the router is known to
 * be case-sensitive, a trailing slash dropped unless it is known to be strict. A path and a pattern
 * are keyed alike, so a keyed pattern matches a keyed path exactly when a router that folds case
 * or slashes routes that path to it.
 */

import { foldCase } from './case-fold';

/** What a server knows of its router. Unknown (undefined) is both ways at once: the conservative choice. */
export interface RoutingOptions {
  /** true: /PREMIUM/a is not /premium/a to the router. */
  caseSensitive?: boolean;
  /** true: /premium/a/ is not /premium/a to the router. */
  strictTrailingSlash?: boolean;
}

/** Every way of keying a router with `routing` may use, the exact one (both strict) left out. */
export function keyings(routing: RoutingOptions): Required<RoutingOptions>[] {
  const cases = routing.caseSensitive === undefined ? [false, true] : [routing.caseSensitive];
  const slashes = routing.strictTrailingSlash === undefined ? [false, true] : [routing.strictTrailingSlash];
  return cases.flatMap((caseSensitive) =>
    slashes
      .filter((strict) => !(caseSensitive && strict))
      .map((strictTrailingSlash) => ({ caseSensitive, strictTrailingSlash })),
  );
}

/** A path, as requestPath() spells it, as the router keys it. */
export function pathKey(path: string, routing: Required<RoutingOptions>): string {
  return dropSlash(routing.caseSensitive ? path : foldCase(path), routing);
}

/**
 * A rule's pattern keyed like pathKey(), but for its case: for a router that folds it, the pattern
 * is compiled with its literal text folded once decoded (so "%C3%89" and "\\%45" are letters like
 * any other) and its classes closed under case (glob.ts, case-fold.ts).
 */
export function patternKey(pattern: string, routing: Required<RoutingOptions>): string {
  return dropSlash(pattern, routing);
}

function dropSlash(key: string, routing: Required<RoutingOptions>): string {
  return routing.strictTrailingSlash || key.length <= 1 || !key.endsWith('/') ? key : key.slice(0, -1);
}
