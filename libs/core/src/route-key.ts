/*
 * Paths and rule patterns as a lenient router keys them: case folded unless the router is known to
 * be case-sensitive, a trailing slash dropped unless it is known to be strict. A path and a pattern
 * are keyed alike, so a keyed pattern matches a keyed path exactly when a router that folds case
 * or slashes routes that path to it.
 */

import { utf8Decode, utf8Encode } from './base64url';

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

/** A rule's pattern keyed like pathKey(): its escaped letters are letters to a router that folds case. */
export function patternKey(pattern: string, routing: Required<RoutingOptions>): string {
  return dropSlash(routing.caseSensitive ? pattern : foldCase(unescapeLetters(pattern)), routing);
}

function dropSlash(key: string, routing: Required<RoutingOptions>): string {
  return routing.strictTrailingSlash || key.length <= 1 || !key.endsWith('/') ? key : key.slice(0, -1);
}

/**
 * Lower case, code point by code point, each keeping its length: "İ" stays as it is (its lower
 * case is two code points), so a "?" or a class in a pattern still stands for one character.
 */
function foldCase(text: string): string {
  const lower = text.toLowerCase();
  // Lower-casing never shortens: the same length means no code point grew.
  if (lower.length === text.length) return lower;
  let out = '';
  for (const c of text) {
    const l = c.toLowerCase();
    out += l.length === c.length ? l : c;
  }
  return out;
}

const ESCAPE_RUN = /(?:%[0-9A-Fa-f]{2})+/g;
const LETTER = /^\p{L}$/u;

/** A pattern's escaped letters ("%C3%89" for "É") as letters; every other escape as written (an escaped "*" stays no wildcard). */
function unescapeLetters(pattern: string): string {
  return pattern.includes('%')
    ? pattern.replace(ESCAPE_RUN, (run) => {
        const bytes = new Uint8Array(run.length / 3);
        for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(run.slice(3 * i + 1, 3 * i + 3), 16);
        const text = utf8Decode(bytes);
        if (text === null) return run;
        let out = '';
        for (const c of text) out += LETTER.test(c) ? c : escaped(c);
        return out;
      })
    : pattern;
}

const escaped = (c: string) =>
  Array.from(utf8Encode(c), (b) => '%' + b.toString(16).toUpperCase().padStart(2, '0')).join('');
