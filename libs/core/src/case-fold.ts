/*
 * Case as a case-insensitive router compares it, for keying paths (route-key.ts) and price rules
 * compiled for such a router (glob.ts): their literal text folded, their classes closed under case.
 */

import { isAscii } from './base64url';

const ESCAPE = /%[0-9a-f]{2}/g;
const DOTTED_CAPITAL_I = /\u0130/g;

/**
 * Case folded as a case-insensitive router compares (a JavaScript RegExp with the i flag: the same
 * upper case is the same letter, so µ, μ and Μ fold alike, and ς and σ), one code point at a time
 * (never the whole string, whose lower-casing turns a final Σ into ς), each keeping its length: "İ"
 * stays as it is, so a "?" or a class in a pattern still stands for one character, as it does to
 * Express's router. `expandDottedI`: "İ" as Fastify's router reads it instead, which lower-cases
 * whole paths: "i" and a combining dot above (site-prices.ts prices a path both ways). Escapes
 * keep their upper-case hex, as requestPath() and the pattern compiler write them.
 */
export function foldCase(text: string, expandDottedI = false): string {
  let folded = isAscii(text) ? text.toLowerCase() : Array.from(text, foldCodePoint).join('');
  if (expandDottedI) folded = dottedIExpanded(folded);
  return folded.includes('%') ? folded.replace(ESCAPE, (escape) => escape.toUpperCase()) : folded;
}

/** `text` with each "İ" as Fastify's router lower-cases it: "i" and a combining dot above. */
export function dottedIExpanded(text: string): string {
  return text.includes('\u0130') ? text.replace(DOTTED_CAPITAL_I, 'i\u0307') : text;
}

/**
 * One code point case folded (a JavaScript RegExp with the i flag: the same upper case is the same
 * letter, so µ, μ and Μ fold alike, and ς and σ), keeping its length: "İ", whose lower case is two
 * code points, stays as it is.
 */
export function foldCodePoint(c: string): string {
  const upper = c.toUpperCase();
  const lower = (upper.length === c.length ? upper : c).toLowerCase();
  return lower.length === c.length ? lower : c;
}

/** The last code point with a case (Adlam's, 1E94x); case-fold.spec.ts checks that none above folds. */
const LAST_CASED = 0x1ffff;

/** Every code point x whose fold is another, with its fold: sorted by x, and sorted by fold. */
interface CasePairs {
  byCode: Int32Array;
  byFold: Int32Array;
}

let pairs: CasePairs | undefined;

/**
 * The case pairs (about 1,500), found when first asked, once per process (about 30 ms on Node):
 * only a rule with a class, compiled for a router that folds case, asks.
 */
function casePairs(): CasePairs {
  if (pairs) return pairs;
  const found: [number, number][] = [];
  for (let x = 0; x <= LAST_CASED; x = x === 0xd7ff ? 0xe000 : x + 1) {
    const c = String.fromCodePoint(x);
    const folded = foldCodePoint(c);
    if (folded !== c) found.push([x, folded.codePointAt(0)!]);
  }
  const flat = (list: [number, number][]) => Int32Array.from(list.flat());
  const byFold = [...found].sort((a, b) => a[1] - b[1] || a[0] - b[0]);
  return (pairs = { byCode: flat(found), byFold: flat(byFold) });
}

/** A class of a rule: code points in `ranges` (pairs of first, last), or every one but those when negated. */
export interface CharClass {
  negated: boolean;
  ranges: number[];
}

/**
 * How a rule's class reads a case-folded path, of the two ways a case-insensitive match can mean:
 * 'any-spelling', some spelling of the path matches the class as written ("[!A-Z]" takes "d": "d"
 * is not in A-Z); 'regexp', as a RegExp with the i flag compares, the class's characters folded
 * too ("[!A-Z]" refuses "d": "D" is in A-Z). They differ only for negated classes; sites price a
 * path by both and charge the higher (site-prices.ts), as neither is the one a router means.
 */
export type CaseReading = 'any-spelling' | 'regexp';

/** Closed classes already worked out, by reading and ranges: a pricing repeats its classes. */
const closed = new Map<string, CharClass>();
const MAX_CLOSED = 4096;

/**
 * The class as `reading` reads paths whose every code point is folded. A positive class holds a
 * folded code point when it holds any that folds to it ("[Z-z]" holds "a", as "A" is in it);
 * read 'regexp', so does the set a negated class refuses; read 'any-spelling', a negated class
 * refuses a folded code point only when it refuses every one that folds to it ("[!kK\u212A]"
 * refuses "k", "[!A-Z]" no letter). Each of the class's ranges looks up only the case pairs in it.
 */
export function closedUnderCase(test: CharClass, reading: CaseReading): CharClass {
  if (test.ranges.length === 0) return test;
  const key = `${reading}${test.negated ? '!' : ''}${test.ranges.join(',')}`;
  const known = closed.get(key);
  if (known) return known;
  const result = close(test, reading);
  if (closed.size >= MAX_CLOSED) closed.clear();
  closed.set(key, result);
  return result;
}

function close(test: CharClass, reading: CaseReading): CharClass {
  const ranges = merged(test.ranges);
  const inside = (c: number) => {
    // In the last range starting at or before c, found by binary search: a class may hold hundreds.
    const next = firstPairFrom(ranges, 0, c + 1);
    return next > 0 && c <= ranges[next - 1];
  };
  // Negated and read 'any-spelling', a folded code point the class refuses leaves it when one of
  // its spellings is not refused; otherwise a folded code point joins when one of its spellings is in.
  const leaving = test.negated && reading === 'any-spelling';
  const { byCode, byFold } = casePairs();
  const table = leaving ? byFold : byCode;
  const sortedAt = leaving ? 1 : 0; // the pair member the table is sorted by, looked up in the ranges
  const points: number[] = [];
  for (let r = 0; r < ranges.length; r += 2) {
    for (let k = firstPairFrom(table, sortedAt, ranges[r]); k < table.length; k += 2) {
      if (table[k + sortedAt] > ranges[r + 1]) break;
      const code = table[k];
      const folded = table[k + 1];
      if (leaving ? !inside(code) : !inside(folded)) points.push(folded);
    }
  }
  if (points.length === 0) return test;
  const moved = merged(points.flatMap((point) => [point, point]));
  return { negated: test.negated, ranges: leaving ? without(ranges, moved) : merged([...ranges, ...moved]) };
}

/** The index of the first pair (of a flat list of pairs) whose member at `sortedAt` is at least `from`, by binary search. */
function firstPairFrom(table: ArrayLike<number>, sortedAt: number, from: number): number {
  let low = 0;
  let high = table.length / 2;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (table[2 * mid + sortedAt] < from) low = mid + 1;
    else high = mid;
  }
  return 2 * low;
}

/** Ranges sorted, and those that overlap or touch joined. */
function merged(ranges: readonly number[]): number[] {
  const list: [number, number][] = [];
  for (let i = 0; i < ranges.length; i += 2) list.push([ranges[i], ranges[i + 1]]);
  list.sort((a, b) => a[0] - b[0]);
  const out: number[] = [];
  for (const [first, last] of list) {
    if (out.length > 0 && first <= out[out.length - 1] + 1) out[out.length - 1] = Math.max(out[out.length - 1], last);
    else out.push(first, last);
  }
  return out;
}

/** `ranges` less `removed` (both merged). */
function without(ranges: readonly number[], removed: readonly number[]): number[] {
  const out: number[] = [];
  let r = 0;
  for (let i = 0; i < ranges.length; i += 2) {
    let first = ranges[i];
    const last = ranges[i + 1];
    while (r < removed.length && removed[r + 1] < first) r += 2;
    for (let k = r; k < removed.length && removed[k] <= last && first <= last; k += 2) {
      if (removed[k] > first) out.push(first, removed[k] - 1);
      first = Math.max(first, removed[k + 1] + 1);
    }
    if (first <= last) out.push(first, last);
  }
  return out;
}
