/*
 * fnmatch-style price rules, compiled once and matched without backtracking.
 *
 *   *        any run of characters within one segment, including none ("/blog/*" matches "/blog/")
 *   ?        exactly one character other than "/"
 *   [abc]    one character of the class; ranges "[a-z]"; "[!abc]" or "[^abc]" negate
 *   \x       the character x, literally
 *   **       rejected: "*" never crosses a "/", and we say so instead of guessing
 *
 * Classes never match "/" and may not list it. "//", "/./" and "/../" are refused: requestPath()
 * collapses and resolves them, so such a rule could never match. Literal text is percent-decoded like request paths
 * (see request-path.ts), so "/caf%C3%A9" and "/café" are the same pattern. Matching is
 * case-sensitive and covers the whole path; a trailing slash is significant ("/blog" ≠ "/blog/").
 *
 * A pattern is split at its stars into chunks: the first must start the path, the last must end it,
 * and each one between is placed at its leftmost match after the one before, within the segment
 * the star before it is in. Leftmost is never worse (the next star can still reach any later place),
 * so nothing is retried, where a backtracking RegExp took 11.5 s for "/*a*a*a*a*b" against 200
 * characters. A chunk between stars is found by one pass over its segment (a chunk holding a "/" has
 * only one place, where its first "/" meets the segment's end), and the next chunk's pass starts where
 * it ended, so each path character is read by one pass: literal text by Knuth–Morris–Pratt (at most
 * two steps a character), text with "?" or classes by bit-parallel Shift-And (⌈chunk / 32⌉ state
 * words a character). Such a chunk may hold at most MAX_SEARCHED_WILDCARD_RUN (128) characters:
 * Shift-And over a 1,019-character chunk took ~40,000 word updates on a 2,048-character path, over
 * 100 µs, and no bit-parallel trick goes below chunk × (segment − chunk) / 32. So a lookup takes
 * O(path × 4 + pattern) steps, a few thousand word updates at worst (the spec states the bound).
 * Paths are read by code point, as a "u" RegExp does.
 */

import { closedUnderCase, foldCase, type CaseReading } from './case-fold';
import { MAX_PRICE_MICROS } from './price';
import { decodePathEscapes, requestPath } from './request-path';
import { keyings, patternKey } from './route-key';

export const MAX_PATTERN_LENGTH = 1024;

/**
 * The most characters between two stars when they hold a "?" or a class: such a part is searched for
 * by Shift-And, whose cost is path × ⌈part / 32⌉ word updates, so this keeps a lookup at a few
 * thousand of them (literal parts are searched for by KMP, linear in the path whatever their length).
 */
export const MAX_SEARCHED_WILDCARD_RUN = 128;

export type PatternErrorType = 'pattern_globstar' | 'pattern_syntax' | 'pattern_empty';

export interface PatternProblem {
  type: PatternErrorType;
  msg: string;
}

export interface PriceRule {
  pattern: string;
  micros: bigint;
}

/** `rule` is the index of the matching rule, null when the default price applied. */
export interface PriceMatch {
  micros: bigint;
  rule: number | null;
  pattern: string | null;
}

export interface PriceTable {
  /** The price of a request target (path and query, or a URL), read by requestPath(). */
  resolve(url: string): PriceMatch;
  /**
   * The price of a path requestPath() already read, as it is: read again, a "?" or "#" that came
   * from an escape would be cut off as a query or fragment, and a longer path priced by its prefix.
   */
  resolvePath(path: string): PriceMatch;
  readonly size: number;
  /** About the bytes the compiled table keeps on the heap: what a cache of many sites' tables weighs them by. */
  readonly heapBytes: number;
}

export class PatternError extends Error {
  override readonly name = 'PatternError';

  constructor(
    readonly index: number,
    readonly pattern: string,
    readonly type: PatternErrorType,
    msg: string,
  ) {
    super(`Rule ${index}: ${msg}`);
  }
}

/**
 * A compiled pattern. Without wildcards, `glob` is null and `literal` is the whole (decoded)
 * pattern; otherwise `literal` is the text before the first wildcard, which files the rule by its first segment.
 */
interface CompiledPattern {
  glob: Chunk[] | null;
  literal: string;
}

/**
 * The pattern between two stars (or an end), as one entry per UTF-16 unit of decoded literal text
 * (to equal the path's unit) or per test (~i for tests[i], which reads one code point). It matches
 * a fixed number of code points, `points`.
 */
interface Chunk {
  units: number[];
  tests: CharTest[];
  points: number;
  /** Code points before the chunk's first literal "/", -1 without one. */
  slashAt: number;
  /** The Shift-And tables of a chunk between two stars without a "/" that holds a "?" or a class (null on the others). */
  scan: Scanner | null;
  /** The KMP failure table of a chunk between two stars of literal text only, without a "/" (null on the others). */
  fail: Int32Array | null;
}

/**
 * Bit j of the Shift-And state is set when the chunk's first j + 1 code points match the last ones
 * read; each code point read shifts the state by one place and ANDs in the mask of the places that
 * accept it. Masks are one 32-bit word, or four (of 32 places each), at an offset in `masks`: `ascii`
 * holds the offset for code points below 128, and the rest are ranges from `starts[i]` up that share
 * `offsets[i]`, found by binary search. A match ends where the last place's bit is set.
 */
interface Scanner {
  masks: Int32Array;
  ascii: Int32Array;
  starts: Int32Array;
  offsets: Int32Array;
  /** The last place's bit in its word. */
  lastBit: number;
  /** Per state word, the last place's bit if it is in that word, else 0. */
  lastBits: Int32Array;
}

/** "?" or a class: one code point other than "/", in `ranges` (pairs of first, last) unless negated. */
interface CharTest {
  negated: boolean;
  ranges: number[];
}

const ANY_CHAR: CharTest = { negated: true, ranges: [] };
const SLASH = 0x2f;

/**
 * Matcher work so far, in steps (a pattern character compared, a path character passed over, a state
 * word updated or a range table probed); tests bound it.
 */
let steps = 0;

/** The step count past which a lookup stops (withinSteps); Infinity outside one. */
let stepLimit = Infinity;
/** Thrown to end a lookup that spent its budget: one object, no stack to capture. */
const STEPS_SPENT = new Error('matcher step budget spent');

/**
 * `lookup`'s result if its lookups take at most `budget` more matcher steps, else undefined: each
 * is bounded (O(path × pattern / 32)), but a table of many wildcard rules multiplies that by the
 * rules every path is tried against.
 */
export function withinSteps<T>(budget: number, lookup: () => T): T | undefined {
  const outer = stepLimit;
  stepLimit = Math.min(outer, steps + budget);
  try {
    return lookup();
  } catch (error) {
    if (error === STEPS_SPENT && !(steps > outer)) return undefined;
    throw error;
  } finally {
    stepLimit = outer;
  }
}

/** Total matcher steps since the module loaded: tests take differences to check that work stays O(path × pattern / 32). */
export function globSteps(): number {
  return steps;
}

// eslint-disable-next-line no-control-regex -- control characters are what it refuses
const CONTROL_CHARACTER = /[\x00-\x1f\x7f]/;

/**
 * Null when the pattern is valid, else why not. Valid means as written and as every lenient router
 * keys it (route-key.ts: case folded, a trailing slash dropped), since sites price both ways:
 * "/a\\/" without its slash ends in a lone backslash.
 */
export function validatePathPattern(pattern: string): PatternProblem | null {
  // No request path carries one unescaped (requestPath keeps them percent-encoded): write "%01".
  // Refused in new rules only: a stored one still compiles (matching nothing, as it always did).
  if (typeof pattern === 'string' && CONTROL_CHARACTER.test(pattern))
    return syntax(
      'Path pattern must not hold control characters (U+0000-U+001F, U+007F); write them percent-encoded, as "%01"',
    );
  const compiled = compilePattern(pattern, undefined, false);
  if ('type' in compiled) return compiled;
  for (const keying of keyings({})) {
    const key = patternKey(pattern, keying);
    for (const folding of keying.caseSensitive ? [undefined] : caseFoldingsOf(pattern)) {
      const keyed = compilePattern(key, folding, false);
      if (!('type' in keyed)) continue;
      const how = [
        !keying.caseSensitive && 'lower-cased',
        folding?.expandDottedI && '"İ" as Fastify reads it',
        !keying.strictTrailingSlash && 'without its trailing slash',
      ];
      return {
        type: keyed.type,
        msg: `Path pattern must also be valid read as a lenient router reads paths (${how.filter(Boolean).join(', ')}): ${keyed.msg}`,
      };
    }
  }
  return null;
}

/**
 * Each way a case-folding table compiles `pattern` (site-prices.ts): classes read both ways when one
 * is negated, and "İ" expanded to two characters when it may hold one (as written or escaped).
 */
function caseFoldingsOf(pattern: string): CaseFolding[] {
  const readings: CaseReading[] = NEGATED_CLASS.test(pattern) ? ['any-spelling', 'regexp'] : ['any-spelling'];
  const dottedI = /\u0130|%c4%b0/i.test(pattern);
  return readings.flatMap((classes) => (dottedI ? [{ classes }, { classes, expandDottedI: true }] : [{ classes }]));
}

/**
 * A negated class's opening ("[!" or "[^"), whose two case readings differ (case-fold.ts): a table
 * folding case reads it both ways. An escaped "\\[" matching too only costs a second table.
 */
export const NEGATED_CLASS = /\[[!^]/;

/** For paths keyed for a router that folds case (route-key.ts): how the rules are compiled to meet them. */
export interface CaseFolding {
  /** How classes read folded code points (case-fold.ts). */
  classes: CaseReading;
  /** "İ" read as Fastify's router reads it: "i" and a combining dot above (case-fold.ts foldCase). */
  expandDottedI?: boolean;
}

/**
 * Compiles ordered rules: resolve() prices a URL by the first matching rule, else the default.
 * `caseFolded`: the paths looked up are keyed for a router that folds case, and the rules are
 * compiled so: their literal text folded once decoded, their classes closed under case.
 */
export function compilePriceTable(
  rules: readonly PriceRule[],
  defaultMicros: bigint,
  caseFolded?: CaseFolding,
): PriceTable {
  checkMicros(defaultMicros);
  const table = rules.map(({ pattern, micros }, index) => {
    const compiled = compilePattern(pattern, caseFolded);
    if ('type' in compiled) throw new PatternError(index, pattern, compiled.type, compiled.msg);
    checkMicros(micros);
    return { index, pattern, micros, ...compiled };
  });
  // Literal patterns are found by one map lookup. Wildcard rules whose first segment is literal
  // ("/blog/*") are tried only on paths in that segment, the others ("/*.pdf", "/blog*") on every
  // path; both lists stay in rule order, and only rules listed before a literal hit are tried.
  const exact = new Map<string, number>();
  const bySegment = new Map<string, WildcardRule[]>();
  const anySegment: WildcardRule[] = [];
  for (const rule of table) {
    if (!rule.glob) {
      if (!exact.has(rule.literal)) exact.set(rule.literal, rule.index);
      continue;
    }
    const wildcard = rule as WildcardRule;
    const key = firstSegment(rule.literal);
    if (key === null) anySegment.push(wildcard);
    else if (bySegment.has(key)) bySegment.get(key)!.push(wildcard);
    else bySegment.set(key, [wildcard]);
  }

  function resolvePath(path: string): PriceMatch {
    const limit = exact.get(path) ?? table.length;
    const own = bySegment.get(firstSegment(path + '/')!) ?? [];
    for (let i = 0, j = 0; ;) {
      // The next rule in list order from either list.
      const rule =
        j >= anySegment.length || (i < own.length && own[i].index < anySegment[j].index) ? own[i++] : anySegment[j++];
      if (rule === undefined || rule.index > limit) break;
      if (matchGlob(rule.glob, path)) return matchOf(rule);
      if (steps > stepLimit) throw STEPS_SPENT;
    }
    return limit < table.length ? matchOf(table[limit]) : { micros: defaultMicros, rule: null, pattern: null };
  }

  return {
    size: table.length,
    heapBytes: table.reduce((bytes, rule) => bytes + heapBytesOf(rule), TABLE_BYTES),
    resolve: (url) => resolvePath(requestPath(url)),
    resolvePath,
  };
}

/**
 * Heap sizes (64-bit V8, pointers compressed) behind heapBytesOf(), from measuring compiled tables of
 * wildcard, class and literal rules (glob.spec checks the estimate against the heap): an object's
 * header and fields, an array's slot, a typed array's own object and buffer beside its bytes.
 */
const TABLE_BYTES = 4096;
const RULE_BYTES = 100;
const CHUNK_BYTES = 280;
const TEST_BYTES = 48;
const SLOT_BYTES = 8;
const TYPED_ARRAY_BYTES = 240;

/**
 * About the heap `patterns` take compiled as written (a table's heapBytes), compiled one at a time
 * and no further once past `limit`: a pricing is weighed before it is stored. A pattern that does
 * not compile counts nothing (validatePathPattern refuses it).
 */
export function patternsHeapBytes(patterns: readonly string[], limit = Infinity): number {
  let bytes = TABLE_BYTES;
  for (const pattern of patterns) {
    if (bytes > limit) break;
    const compiled = compilePattern(pattern);
    if (!('type' in compiled)) bytes += heapBytesOf(compiled);
  }
  return bytes;
}

/** A string's bytes as V8 keeps it: one a character, two once any is beyond Latin-1. */
const stringBytes = (text: string) => text.length * (/[\u0100-\uffff]/.test(text) ? 2 : 1);

/** About the bytes a compiled rule keeps: its object and strings, its chunks and their tables. */
function heapBytesOf(rule: CompiledPattern): number {
  // The decoded text before its first wildcard (a literal rule's key in the table); the pattern is the
  // caller's string, held once whatever the tables.
  let bytes = RULE_BYTES + stringBytes(rule.literal);
  if (rule.glob) bytes += 3 * RULE_BYTES; // its place in the wildcard lists, its chunks' list
  for (const chunk of rule.glob ?? []) {
    bytes += CHUNK_BYTES + SLOT_BYTES * (chunk.units.length + chunk.tests.length);
    for (const test of chunk.tests) if (test !== ANY_CHAR) bytes += TEST_BYTES + SLOT_BYTES * test.ranges.length;
    if (chunk.fail) bytes += TYPED_ARRAY_BYTES + chunk.fail.byteLength;
    const scan = chunk.scan;
    if (scan)
      for (const array of [scan.masks, scan.ascii, scan.starts, scan.offsets, scan.lastBits])
        bytes += TYPED_ARRAY_BYTES + array.byteLength;
  }
  return bytes;
}

interface WildcardRule {
  index: number;
  pattern: string;
  micros: bigint;
  glob: Chunk[];
  literal: string;
}

/** "/blog/…" → "blog"; null when the text ends before the first segment does. */
function firstSegment(text: string): string | null {
  const end = text.indexOf('/', 1);
  return end < 0 ? null : text.slice(1, end);
}

function matchOf(rule: { index: number; pattern: string; micros: bigint }): PriceMatch {
  return { micros: rule.micros, rule: rule.index, pattern: rule.pattern };
}

/** Whether the pattern split at its stars into `chunks` matches the whole path. */
function matchGlob(chunks: Chunk[], path: string): boolean {
  let at = matchChunkAt(chunks[0], path, 0);
  if (at < 0) return false;
  if (chunks.length === 1) return at === path.length;
  let segmentEnd = nextSlash(path, at); // no star may pass it
  for (let i = 1; i < chunks.length - 1; i++) {
    at = findChunk(chunks[i], path, at, segmentEnd);
    if (at < 0) return false;
    if (at > segmentEnd) segmentEnd = nextSlash(path, at);
  }
  return endsWithChunk(chunks[chunks.length - 1], path, at, segmentEnd);
}

/** The end of the chunk's leftmost match starting in from..last (after a star; `last` is the next "/" or the end), or -1. */
function findChunk(chunk: Chunk, path: string, from: number, last: number): number {
  if (chunk.fail) return findLiteral(chunk.units, chunk.fail, path, from, last);
  if (chunk.scan) return scanChunk(chunk.scan, path, from, last);
  // Whatever precedes the chunk's first "/" cannot hold one, so that "/" is the one at `last`.
  if (last === path.length) return -1;
  const start = codePointsBack(path, last, chunk.slashAt, from);
  return start < 0 ? -1 : matchChunkAt(chunk, path, start);
}

/**
 * Knuth–Morris–Pratt over path[from..last), which holds no "/": the end of the leftmost match of
 * literal `units`, or -1. At most two steps a unit, whatever the text: String.indexOf() is not
 * linear (V8 took 270 µs for "a"×500 + "b" + "a"×500 in 2,047 "a"s). Literal text never starts or
 * ends inside a surrogate pair (lone surrogates are tests), so matching UTF-16 units is exact.
 */
function findLiteral(units: number[], fail: Int32Array, path: string, from: number, last: number): number {
  const size = units.length;
  let k = 0; // units matched so far
  for (let at = from; at < last; at++) {
    const c = path.charCodeAt(at);
    while (k > 0 && units[k] !== c) {
      k = fail[k - 1];
      steps++;
    }
    if (units[k] === c && ++k === size) {
      steps += at + 1 - from;
      return at + 1;
    }
  }
  steps += last - from;
  return -1;
}

/** fail[i]: the length of the longest proper prefix of units[0..i] that is also its suffix. */
function failureTable(units: number[]): Int32Array {
  const fail = new Int32Array(units.length);
  for (let i = 1, k = 0; i < units.length; i++) {
    while (k > 0 && units[i] !== units[k]) k = fail[k - 1];
    if (units[i] === units[k]) k++;
    fail[i] = k;
  }
  return fail;
}

/**
 * One Shift-And pass over path[from..last), which holds no "/": the end of the first match, which
 * is the leftmost since a chunk is a fixed number of code points, or -1. A code point costs a step
 * per state word updated (at most 4), and up to 12 for a binary search.
 */
function scanChunk(scan: Scanner, path: string, from: number, last: number): number {
  const { masks, ascii, lastBit } = scan;
  if (scan.lastBits.length > 1) return scanWords(scan, path, from, last);
  let state = 0; // the usual chunk, up to 32 code points, keeps its state out of memory
  for (let at = from; at < last;) {
    const c = path.codePointAt(at)!;
    at += c > 0xffff ? 2 : 1;
    state = ((state << 1) | 1) & masks[c < 128 ? ascii[c] : maskOffset(scan, c)]; // a match may start at every code point
    steps++;
    if ((state & lastBit) !== 0) return at;
  }
  return -1;
}

/**
 * scanChunk() for a chunk of 33 to 128 code points: four state words, kept in locals (a mask has
 * four words, those past the chunk zero). `lastBits` has the last place's bit in its word, 0 in the others.
 */
function scanWords(scan: Scanner, path: string, from: number, last: number): number {
  const { masks, ascii } = scan;
  const [last0, last1, last2, last3] = scan.lastBits;
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  for (let at = from; at < last;) {
    const c = path.codePointAt(at)!;
    at += c > 0xffff ? 2 : 1;
    const offset = c < 128 ? ascii[c] : maskOffset(scan, c);
    s3 = ((s3 << 1) | (s2 >>> 31)) & masks[offset + 3];
    s2 = ((s2 << 1) | (s1 >>> 31)) & masks[offset + 2];
    s1 = ((s1 << 1) | (s0 >>> 31)) & masks[offset + 1];
    s0 = ((s0 << 1) | 1) & masks[offset]; // 1: a match may start at every code point
    steps += 4;
    if (((s0 & last0) | (s1 & last1) | (s2 & last2) | (s3 & last3)) !== 0) return at;
  }
  return -1;
}

/** The offset of the mask of a code point from 128 up: a binary search of at most 12 probes (≤ 4,096 ranges). */
function maskOffset(scan: Scanner, c: number): number {
  const { starts } = scan;
  let low = 0; // starts[low] <= c < starts[high]
  let high = starts.length;
  while (high - low > 1) {
    const mid = (low + high) >>> 1;
    if (starts[mid] <= c) low = mid;
    else high = mid;
    steps++;
  }
  return scan.offsets[low];
}

/** Whether the last chunk ends the path, after a star from `from` to at most `last`: its width places it. */
function endsWithChunk(chunk: Chunk, path: string, from: number, last: number): boolean {
  const start =
    chunk.tests.length === 0 ? path.length - chunk.units.length : codePointsBack(path, path.length, chunk.points, 0);
  return start >= from && start <= last && matchChunkAt(chunk, path, start) === path.length;
}

/**
 * Where the `count` code points before `end` start, or -1 if fewer lie between `from` (a code point
 * boundary) and `end`: where a test reads one, the width varies.
 */
function codePointsBack(path: string, end: number, count: number, from: number): number {
  let start = end;
  steps += count;
  for (; count > 0 && start > from; count--) start -= isBoundary(path, start - 1) ? 1 : 2;
  return count === 0 ? start : -1;
}

/** Where the chunk ends when it starts at `at` (a code point boundary), or -1. */
function matchChunkAt(chunk: Chunk, path: string, at: number): number {
  const { units, tests } = chunk;
  steps += units.length;
  for (let k = 0; k < units.length; k++) {
    const unit = units[k];
    if (unit >= 0) {
      if (path.charCodeAt(at) !== unit) return -1; // NaN past the end
      at++;
    } else {
      const c = path.codePointAt(at);
      if (c === undefined || !accepts(tests[~unit], c)) return -1;
      at += c > 0xffff ? 2 : 1;
    }
  }
  return at;
}

function accepts(test: CharTest, c: number): boolean {
  if (c === SLASH) return false;
  const { ranges } = test;
  let inside = false;
  for (let i = 0; i < ranges.length && !inside; i += 2) inside = c >= ranges[i] && c <= ranges[i + 1];
  return inside !== test.negated;
}

/** False between the two halves of a surrogate pair: a "u" RegExp never starts or ends a match there. */
function isBoundary(text: string, at: number): boolean {
  const low = text.charCodeAt(at);
  const high = text.charCodeAt(at - 1);
  return !(low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff);
}

/**
 * The segment nextSlash() read last: from any place in lastFrom..lastEnd of lastPath, the next "/"
 * is at lastEnd. The rules tried on a path mostly ask from the same place (after "/" for "/*.pdf"),
 * so a long segment is read once per lookup, not once per rule.
 */
let lastPath = '';
let lastFrom = 0;
let lastEnd = 0;

/** The index of the first "/" at or after `from`, else the path's length. */
function nextSlash(path: string, from: number): number {
  if (from >= lastFrom && from <= lastEnd && path === lastPath) return lastEnd;
  let end = from;
  while (end < path.length && path.charCodeAt(end) !== SLASH) end++; // a loop: cheaper than indexOf() on short segments
  steps += end - from;
  lastPath = path;
  lastFrom = from;
  lastEnd = end;
  return end;
}

function checkMicros(micros: bigint): void {
  if (typeof micros !== 'bigint' || micros < 0n || micros > MAX_PRICE_MICROS) {
    throw new RangeError(`Price must be a bigint of micro-USD within 0..${MAX_PRICE_MICROS}, got ${String(micros)}`);
  }
}

/** `searchTables: false` checks the pattern without building its search tables (validation only: they are most of the work). */
function compilePattern(
  pattern: string,
  caseFolded?: CaseFolding,
  searchTables = true,
): CompiledPattern | PatternProblem {
  if (typeof pattern !== 'string') return syntax('Path pattern must be a string');
  if (pattern.length === 0) return { type: 'pattern_empty', msg: 'Path pattern must not be empty' };
  if (pattern.length > MAX_PATTERN_LENGTH)
    return syntax(`Path pattern must be at most ${MAX_PATTERN_LENGTH} characters`);
  if (pattern[0] !== '/') return syntax('Path pattern must start with "/"');

  const chars = Array.from(pattern); // code points: "?" and classes take one character, not one UTF-16 unit
  const literals: string[] = []; // decoded literal runs, one before each wildcard and one after the last
  const chunks: Chunk[] = [emptyChunk()];
  let run = ''; // literal text met since the last wildcard
  // Ends the literal run; `test` follows it in the same chunk, or a star starts a new chunk.
  // Literal text is folded once decoded: an escaped letter ("%C3%89", "\\%45") is a letter like any other.
  const decoded = (text: string) =>
    caseFolded ? foldCase(decodePathEscapes(text), caseFolded.expandDottedI) : decodePathEscapes(text);
  const wildcard = (test: CharTest | 'star') => {
    const text = decoded(run);
    literals.push(text);
    addText(chunks[chunks.length - 1], text);
    if (test === 'star') chunks.push(emptyChunk());
    else addTest(chunks[chunks.length - 1], test);
    run = '';
  };

  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    if (c === '\\') {
      if (++i === chars.length) return syntax('Path pattern must not end with a lone "\\"');
      run += chars[i];
    } else if (c === '*') {
      if (chars[i + 1] === '*') {
        return { type: 'pattern_globstar', msg: '`**` is not supported; `*` matches one path segment' };
      }
      wildcard('star');
    } else if (c === '?') {
      wildcard(ANY_CHAR);
    } else if (c === '[') {
      const cls = parseClass(chars, i);
      if ('type' in cls) return cls;
      wildcard(caseFolded ? closedUnderCase(cls.test, caseFolded.classes) : cls.test);
      i = cls.end;
    } else {
      run += c;
    }
  }
  const tail = decoded(run);
  literals.push(tail);
  // requestPath() collapses "//" and resolves dot segments, so a pattern holding them could never match.
  if (/\/\/|\/\.{1,2}(?:\/|$)/.test(literals.join('\0'))) {
    return syntax('Path pattern must not contain "//" or "." / ".." segments: request paths never do');
  }
  if (literals.length === 1) return { glob: null, literal: tail };
  addText(chunks[chunks.length - 1], tail);
  // Only chunks between stars are searched for; the first and last are compared where they must be.
  for (let i = 1; i < chunks.length - 1; i++) {
    const chunk = chunks[i];
    if (chunk.slashAt >= 0) continue;
    if (chunk.tests.length === 0) {
      if (searchTables) chunk.fail = failureTable(chunk.units);
    } else if (chunk.points > MAX_SEARCHED_WILDCARD_RUN) {
      return syntax(
        `Between two "*", a part holding "?" or "[…]" must be at most ${MAX_SEARCHED_WILDCARD_RUN} characters long`,
      );
    } else if (searchTables) chunk.scan = scannerOf(chunk);
  }
  return { glob: chunks, literal: literals[0] };
}

function emptyChunk(): Chunk {
  return { units: [], tests: [], points: 0, slashAt: -1, scan: null, fail: null };
}

/**
 * The Shift-And tables of a chunk without a "/" (which is never looked up). A sweep over code points
 * keeps each place's count of ranges covering the point (a literal covers itself), so a mask is
 * built once per range boundary, not once per code point and place: O(pattern) ranges, and masks
 * of at most 4 words.
 */
function scannerOf(chunk: Chunk): Scanner {
  const places: CharTest[] = [];
  const { units } = chunk;
  for (let k = 0; k < units.length; k++) {
    if (units[k] < 0) {
      places.push(chunk.tests[~units[k]]);
    } else {
      // A literal high surrogate is always followed by its low one (see addText).
      const high = units[k] >= 0xd800 && units[k] <= 0xdbff;
      const point = high ? String.fromCharCode(units[k], units[++k]).codePointAt(0)! : units[k];
      places.push({ negated: false, ranges: [point, point] });
    }
  }
  const words = places.length <= 32 ? 1 : 4; // see scanWords()
  // Where a range of place j starts covering (point × 4096 + j × 2 + 1) or stops (+ 0), sorted by
  // point; place `places.length`, past the last, marks 128, where the ASCII table ends.
  const events: number[] = [128 * 4096 + places.length * 2];
  places.forEach(({ ranges }, j) => {
    for (let i = 0; i < ranges.length; i += 2)
      events.push(ranges[i] * 4096 + j * 2 + 1, (ranges[i + 1] + 1) * 4096 + j * 2);
  });
  const sorted = Float64Array.from(events).sort();
  const covered = new Int32Array(places.length + 1);
  const mask = new Int32Array(words);
  places.forEach(({ negated }, j) => {
    if (negated) mask[j >> 5] |= 1 << (j & 31);
  });
  const masks = new Int32Array((sorted.length + 1) * words); // room for a mask per range, cut to size below
  let used = 0;
  const known = new Map<number, number>(); // a mask's offset by its hash: ranges far apart often share one
  const starts: number[] = [];
  const offsets: number[] = [];
  for (let e = 0, point = 0; ; point = Math.floor(sorted[e] / 4096)) {
    for (; e < sorted.length && Math.floor(sorted[e] / 4096) === point; e++) {
      const j = (sorted[e] % 4096) >> 1;
      const was = covered[j] > 0;
      covered[j] += sorted[e] % 2 === 1 ? 1 : -1;
      if (was !== covered[j] > 0 && j < places.length) mask[j >> 5] ^= 1 << (j & 31);
    }
    let hash = 0;
    for (let w = 0; w < words; w++) hash = Math.imul(hash ^ mask[w], 0x9e3779b1);
    let offset = known.get(hash);
    if (offset === undefined || !sameWords(mask, masks, offset)) {
      offset = used;
      known.set(hash, offset);
      masks.set(mask, offset);
      used += words;
    }
    if (offset !== offsets[offsets.length - 1] || point === 128) {
      starts.push(point);
      offsets.push(offset);
    }
    if (e === sorted.length) break;
  }
  const split = starts.indexOf(128);
  const ascii = new Int32Array(128);
  for (let c = 0, i = 0; c < 128; c++) {
    while (starts[i + 1] <= c) i++;
    ascii[c] = offsets[i];
  }
  const last = places.length - 1;
  const lastBits = new Int32Array(words);
  lastBits[last >> 5] = 1 << (last & 31);
  return {
    masks: masks.slice(0, used),
    ascii,
    starts: Int32Array.from(starts.slice(split)),
    offsets: Int32Array.from(offsets.slice(split)),
    lastBit: 1 << (last & 31),
    lastBits,
  };
}

function sameWords(mask: Int32Array, masks: Int32Array, offset: number): boolean {
  for (let w = 0; w < mask.length; w++) if (mask[w] !== masks[offset + w]) return false;
  return true;
}

function addText(chunk: Chunk, text: string): void {
  for (const c of text) {
    const point = c.codePointAt(0)!;
    if (point >= 0xd800 && point <= 0xdfff) {
      // A lone surrogate must not match half of a pair: it is tested as a whole code point instead.
      addTest(chunk, { negated: false, ranges: [point, point] });
      continue;
    }
    if (point === SLASH && chunk.slashAt < 0) chunk.slashAt = chunk.points;
    for (let k = 0; k < c.length; k++) chunk.units.push(c.charCodeAt(k));
    chunk.points++;
  }
}

function addTest(chunk: Chunk, test: CharTest): void {
  chunk.units.push(~chunk.tests.length);
  chunk.tests.push(test);
  chunk.points++;
}

/** Parses the class opening at chars[start] ("["); `end` is the index of its "]". */
function parseClass(chars: string[], start: number): { test: CharTest; end: number } | PatternProblem {
  let i = start + 1;
  const negated = chars[i] === '!' || chars[i] === '^';
  if (negated) i++;
  const ranges: number[] = [];
  // Reads one class character at i, honouring "\" escapes; null at the end of the pattern.
  const read = (): string | null => {
    if (chars[i] === '\\') i++;
    return i < chars.length ? chars[i] : null;
  };
  for (; i < chars.length && chars[i] !== ']'; i++) {
    const low = read();
    if (low === null) break;
    let high = low;
    if (chars[i + 1] === '-' && i + 2 < chars.length && chars[i + 2] !== ']') {
      i += 2;
      const end = read();
      if (end === null) break;
      if (end.codePointAt(0)! < low.codePointAt(0)!) return syntax(`Reversed range "${low}-${end}" in path pattern`);
      high = end;
    }
    if (low === '/' || high === '/') return syntax('A character class cannot contain "/"');
    ranges.push(low.codePointAt(0)!, high.codePointAt(0)!);
  }
  if (i >= chars.length) return syntax('Unterminated "[" in path pattern');
  if (ranges.length === 0) return syntax('Empty character class "[]" in path pattern');
  // accepts() refuses "/" whatever the ranges: one such as "[ -~]" spans it.
  return { test: { negated, ranges }, end: i };
}

function syntax(msg: string): PatternProblem {
  return { type: 'pattern_syntax', msg };
}
