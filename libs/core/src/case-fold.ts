/*
 * Case as a case-insensitive router compares it, for keying paths and price rules (route-key.ts)
 * and for the classes of rules keyed that way (glob.ts).
 */

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
 * The class as a case-insensitive router reads it, for paths whose every code point is folded: a
 * folded code point is in it when the class as written holds the code point or any other that
 * folds to it. "[Z-z]" holds "a" (and so "A"), "[!A-Z]" every letter (each has a lower case
 * outside it), "[!kK\u212A]" no "k" at all. Folding the class's text instead would read "[!A-Z]"
 * as "[!a-z]" and price /BLOG/dog below the route /blog/dog it reaches.
 */
export function closedUnderCase(test: CharClass): CharClass {
  if (test.ranges.length === 0) return test;
  const ranges = merged(test.ranges);
  const inside = (c: number) => {
    for (let i = 0; i < ranges.length; i += 2) if (c >= ranges[i] && c <= ranges[i + 1]) return true;
    return false;
  };
  const table = casePairs();
  const points: number[] = [];
  for (let k = 0; k < table.length; k += 2) {
    const [x, folded] = [table[k], table[k + 1]];
    // In a keyed path, `folded` stands for x too: negated, it leaves the class when x is not in what
    // the class refuses; otherwise it joins when x is in the class.
    if (test.negated ? inside(folded) && !inside(x) : inside(x) && !inside(folded)) points.push(folded);
  }
  if (points.length === 0) return test;
  const moved = merged(points.flatMap((point) => [point, point]));
  return { negated: test.negated, ranges: test.negated ? without(ranges, moved) : merged([...ranges, ...moved]) };
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
