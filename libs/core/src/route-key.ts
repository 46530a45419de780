/*
 * Paths and rule patterns as a lenient router keys them: case folded unless the router is known to
 * be case-sensitive, a trailing slash dropped unless it is known to be strict. A path and a pattern
 * are keyed alike, so a keyed pattern matches a keyed path exactly when a router that folds case
 * or slashes routes that path to it.
 */

import { isAscii, utf8Decode, utf8Encode } from './base64url';
import { foldCodePoint } from './case-fold';
import { ESCAPE_RUN, escapeRunBytes } from './request-path';

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
 * A rule's pattern keyed like pathKey(): its escaped letters are letters to a router that folds
 * case. Its classes stay as written: compiled for such a router, they are closed under case
 * (case-fold.ts), which folding their text is not.
 */
export function patternKey(pattern: string, routing: Required<RoutingOptions>): string {
  return dropSlash(routing.caseSensitive ? pattern : foldPatternText(pattern), routing);
}

function dropSlash(key: string, routing: Required<RoutingOptions>): string {
  return routing.strictTrailingSlash || key.length <= 1 || !key.endsWith('/') ? key : key.slice(0, -1);
}

const ESCAPE = /%[0-9a-f]{2}/g;

/**
 * Case folded as a case-insensitive router compares (a JavaScript RegExp with the i flag: the same
 * upper case is the same letter, so µ, μ and Μ fold alike, and ς and σ), one code point at a time
 * (never the whole string, whose lower-casing turns a final Σ into ς), each keeping its length: "İ"
 * stays as it is, so a "?" or a class in a pattern still stands for one character. Escapes keep
 * their upper-case hex, as requestPath() and the pattern compiler write them.
 */
function foldCase(text: string): string {
  const folded = isAscii(text) ? text.toLowerCase() : Array.from(text, foldCodePoint).join('');
  return folded.includes('%') ? folded.replace(ESCAPE, (escape) => escape.toUpperCase()) : folded;
}

const LETTER = /^\p{L}$/u;

/**
 * A pattern's literal text case folded, its escaped letters ("%C3%89" for "É") read as letters
 * first: every other escape stays as written (an escaped "*" is no wildcard). A character after
 * "\\" is folded too; a "[…]" class, where "%" is a character of its own, is left as written.
 */
function foldPatternText(pattern: string): string {
  let out = '';
  let literal = '';
  const flush = () => {
    out += foldCase(literal.includes('%') ? literal.replace(ESCAPE_RUN, unescapeRun) : literal);
    literal = '';
  };
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      flush();
      const next = i + 1 < pattern.length ? String.fromCodePoint(pattern.codePointAt(i + 1)!) : '';
      out += c + foldCase(next);
      i += next.length;
    } else if (c === '[') {
      flush();
      const end = classEnd(pattern, i);
      out += pattern.slice(i, end + 1);
      i = end;
    } else literal += c;
  }
  flush();
  return out;
}

/** Where the class opened at `start` ends (its "]"), as the pattern compiler reads it; the pattern's end if it does not. */
function classEnd(pattern: string, start: number): number {
  let i = start + 1;
  if (pattern[i] === '!' || pattern[i] === '^') i++;
  for (; i < pattern.length && pattern[i] !== ']'; i++) if (pattern[i] === '\\') i++;
  return Math.min(i, pattern.length - 1);
}

function unescapeRun(run: string): string {
  const text = utf8Decode(escapeRunBytes(run));
  if (text === null) return run;
  let out = '';
  for (const c of text) out += LETTER.test(c) ? c : escaped(c);
  return out;
}

const escaped = (c: string) =>
  Array.from(utf8Encode(c), (b) => '%' + b.toString(16).toUpperCase().padStart(2, '0')).join('');
