/*
 * Case as a case-insensitive router compares it, for keying paths (route-key.ts) and price rules
 * compiled for such a router (glob.ts): their literal text folded, their classes closed under case.
 */

import { isAscii } from './base64url';

const ESCAPE = /%[0-9a-f]{2}/g;
/** "i" and a combining dot above: "İ" to Fastify's router, which lower-cases whole paths ("İ" becomes these two). */
const DOTTED_I = /i\u0307/g;

/**
 * Case folded as a case-insensitive router compares (a JavaScript RegExp with the i flag: the same
 * upper case is the same letter, so µ, μ and Μ fold alike, and ς and σ), one code point at a time
 * (never the whole string, whose lower-casing turns a final Σ into ς), each keeping its length: "İ"
 * stays as it is, so a "?" or a class in a pattern still stands for one character; and "i" with a
 * combining dot above is read as "İ", which a router lower-casing whole paths turns into those two.
 * Escapes keep their upper-case hex, as requestPath() and the pattern compiler write them.
 */
export function foldCase(text: string): string {
  let folded = isAscii(text) ? text.toLowerCase() : Array.from(text, foldCodePoint).join('');
  if (folded.includes('\u0307')) folded = folded.replace(DOTTED_I, '\u0130');
  return folded.includes('%') ? folded.replace(ESCAPE, (escape) => escape.toUpperCase()) : folded;
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

let pairs: Int32Array | undefined;

/**
 * [x, fold(x)] for every code point x whose fold is another, by x (about 1,500). Found when first
 * asked, once per process (about 30 ms on Node): only a rule with a class, keyed for a router that
 * folds case, asks.
 */
function casePairs(): Int32Array {
  if (pairs) return pairs;
  const found: number[] = [];
  for (let x = 0; x <= LAST_CASED; x = x === 0xd7ff ? 0xe000 : x + 1) {
    const c = String.fromCodePoint(x);
    const folded = foldCodePoint(c);
    if (folded !== c) found.push(x, folded.codePointAt(0)!);
  }
  return (pairs = Int32Array.from(found));
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

/**
 * The class as `reading` reads paths whose every code point is folded. A positive class holds a
 * folded code point when it holds any that folds to it ("[Z-z]" holds "a", as "A" is in it);
 * read 'regexp', so does the set a negated class refuses; read 'any-spelling', a negated class
 * refuses a folded code point only when it refuses every one that folds to it ("[!kK\u212A]"
 * refuses "k", "[!A-Z]" no letter).
 */
export function closedUnderCase(test: CharClass, reading: CaseReading): CharClass {
  if (test.ranges.length === 0) return test;
  const ranges = merged(test.ranges);
  const inside = (c: number) => {
    // The last range starting at or before c, by binary search: a class may hold hundreds.
    let low = 0;
    let high = ranges.length / 2;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (ranges[2 * mid] <= c) low = mid + 1;
      else high = mid;
    }
    return low > 0 && c <= ranges[2 * low - 1];
  };
  const refusesEverySpelling = test.negated && reading === 'any-spelling';
  const table = casePairs();
  const points: number[] = [];
  for (let k = 0; k < table.length; k += 2) {
    const [x, folded] = [table[k], table[k + 1]];
    // In a keyed path, `folded` stands for x too.
    if (refusesEverySpelling ? inside(folded) && !inside(x) : inside(x) && !inside(folded)) points.push(folded);
  }
  if (points.length === 0) return test;
  const moved = merged(points.flatMap((point) => [point, point]));
  return {
    negated: test.negated,
    ranges: refusesEverySpelling ? without(ranges, moved) : merged([...ranges, ...moved]),
  };
}

/** Ranges sorted, and those that overlap or touch joined. */
function merged(ranges: readonly number[]): number[] {
  const pairs: [number, number][] = [];
  for (let i = 0; i < ranges.length; i += 2) pairs.push([ranges[i], ranges[i + 1]]);
  pairs.sort((a, b) => a[0] - b[0]);
  const out: number[] = [];
  for (const [first, last] of pairs) {
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
