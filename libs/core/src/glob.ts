/*
 * fnmatch-style price rules, compiled once to anchored RegExps.
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
 */

import { MAX_PRICE_MICROS } from './price';
import { decodePathEscapes, requestPath } from './request-path';

export const MAX_PATTERN_LENGTH = 1024;

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
  resolve(url: string): PriceMatch;
  readonly size: number;
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
 * A compiled pattern. Without wildcards, `regex` is null and `literal` is the whole (decoded)
 * pattern; otherwise `literal` is the text before the first wildcard, a cheap startsWith() pre-check.
 */
interface CompiledPattern {
  regex: RegExp | null;
  literal: string;
}

/** Null when the pattern is valid, else why not. */
export function validatePathPattern(pattern: string): PatternProblem | null {
  const compiled = compilePattern(pattern);
  return 'type' in compiled ? compiled : null;
}

/** Compiles ordered rules: resolve() prices a URL by the first matching rule, else the default. */
export function compilePriceTable(rules: readonly PriceRule[], defaultMicros: bigint): PriceTable {
  checkMicros(defaultMicros);
  const table = rules.map(({ pattern, micros }, index) => {
    const compiled = compilePattern(pattern);
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
    if (!rule.regex) {
      if (!exact.has(rule.literal)) exact.set(rule.literal, rule.index);
      continue;
    }
    const wildcard = rule as WildcardRule;
    const key = firstSegment(rule.literal);
    if (key === null) anySegment.push(wildcard);
    else if (bySegment.has(key)) bySegment.get(key)!.push(wildcard);
    else bySegment.set(key, [wildcard]);
  }

  return {
    size: table.length,
    resolve(url: string): PriceMatch {
      const path = requestPath(url);
      const limit = exact.get(path) ?? table.length;
      const own = bySegment.get(firstSegment(path + '/')!) ?? [];
      for (let i = 0, j = 0; ; ) {
        // The next rule in list order from either list.
        const rule = j >= anySegment.length || (i < own.length && own[i].index < anySegment[j].index) ? own[i++] : anySegment[j++];
        if (rule === undefined || rule.index > limit) break;
        if (path.startsWith(rule.literal) && rule.regex.test(path)) return matchOf(rule);
      }
      return limit < table.length ? matchOf(table[limit]) : { micros: defaultMicros, rule: null, pattern: null };
    },
  };
}

interface WildcardRule {
  index: number;
  pattern: string;
  micros: bigint;
  regex: RegExp;
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

function checkMicros(micros: bigint): void {
  if (typeof micros !== 'bigint' || micros < 0n || micros > MAX_PRICE_MICROS) {
    throw new RangeError(`Price must be a bigint of micro-USD within 0..${MAX_PRICE_MICROS}, got ${String(micros)}`);
  }
}

function compilePattern(pattern: string): CompiledPattern | PatternProblem {
  if (typeof pattern !== 'string') return syntax('Path pattern must be a string');
  if (pattern.length === 0) return { type: 'pattern_empty', msg: 'Path pattern must not be empty' };
  if (pattern.length > MAX_PATTERN_LENGTH) return syntax(`Path pattern must be at most ${MAX_PATTERN_LENGTH} characters`);
  if (pattern[0] !== '/') return syntax('Path pattern must start with "/"');

  const chars = Array.from(pattern); // code points: "?" and classes take one character, not one UTF-16 unit
  const literals: string[] = []; // decoded literal runs, one before each wildcard and one after the last
  let source = '';
  let run = ''; // literal text met since the last wildcard
  const wildcard = (regex: string) => {
    const text = decodePathEscapes(run);
    literals.push(text);
    source += escapeRegExp(text) + regex;
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
      wildcard('[^/]*');
    } else if (c === '?') {
      wildcard('[^/]');
    } else if (c === '[') {
      const cls = parseClass(chars, i);
      if ('type' in cls) return cls;
      wildcard(cls.source);
      i = cls.end;
    } else {
      run += c;
    }
  }
  const tail = decodePathEscapes(run);
  literals.push(tail);
  // requestPath() collapses "//" and resolves dot segments, so a pattern holding them could never match.
  if (/\/\/|\/\.{1,2}(?:\/|$)/.test(literals.join('\0'))) {
    return syntax('Path pattern must not contain "//" or "." / ".." segments: request paths never do');
  }
  if (literals.length === 1) return { regex: null, literal: tail };
  return { regex: new RegExp(`^${source}${escapeRegExp(tail)}$`, 'u'), literal: literals[0] };
}

/** Parses the class opening at chars[start] ("["); `end` is the index of its "]". */
function parseClass(chars: string[], start: number): { source: string; end: number } | PatternProblem {
  let i = start + 1;
  const negated = chars[i] === '!' || chars[i] === '^';
  if (negated) i++;
  let members = '';
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
    members += high === low ? codePointEscape(low) : `${codePointEscape(low)}-${codePointEscape(high)}`;
  }
  if (i >= chars.length) return syntax('Unterminated "[" in path pattern');
  if (members === '') return syntax('Empty character class "[]" in path pattern');
  // "/" is excluded explicitly: a range such as "[ -~]" spans it.
  return { source: negated ? `[^/${members}]` : `(?!/)[${members}]`, end: i };
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
}

function codePointEscape(c: string): string {
  return `\\u{${c.codePointAt(0)!.toString(16)}}`;
}

function syntax(msg: string): PatternProblem {
  return { type: 'pattern_syntax', msg };
}
