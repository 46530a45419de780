import type { ValidationItem } from '@crawlgate/core';
import { locOf, type Place } from './forbidden-characters';

/** Deeper bodies are refused: no request of ours nests past a few levels, and recursion is not free. */
export const MAX_JSON_DEPTH = 32;

/** The nesting depth of a parsed JSON value, measured without recursion (so depth itself cannot overflow). */
export function jsonDepthExceeds(value: unknown, limit = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth >= limit) return true;
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return false;
}

/** The most items a list of a body may hold: the longest the API takes (1,000 rules, 1,000 crawler counts). */
export const MAX_JSON_ITEMS = 1_000;
/** The most fields an object of a body may hold: the widest the API takes (500 bots). */
export const MAX_JSON_KEYS = 1_000;
/** The most fields and items a body may hold in all: 1,000 counts of a dozen fields each, with room. */
export const MAX_JSON_ENTRIES = 20_000;

/**
 * Where a parsed body is wider than any the API takes, as a 422 item, else undefined; walked without
 * recursion. Checked before anything reads the body: class-transformer removes duplicate field names
 * in time quadratic in an object's fields, and a list past its DTO's bound was still read item by item.
 */
export function jsonWidthProblem(body: unknown): ValidationItem | undefined {
  const stack: [unknown, Place][] = [[body, { key: 'body' }]];
  let entries = 0;
  while (stack.length > 0) {
    const [current, place] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    const list = Array.isArray(current);
    const size = list ? current.length : Object.keys(current).length;
    const max = list ? MAX_JSON_ITEMS : MAX_JSON_KEYS;
    if (size > max) return tooWide(locOf(place), `At most ${max} ${list ? 'items' : 'fields'}`, max);
    entries += size;
    if (entries > MAX_JSON_ENTRIES)
      return tooWide(['body'], `At most ${MAX_JSON_ENTRIES} fields and items in all`, MAX_JSON_ENTRIES);
    if (list) current.forEach((item, key) => stack.push([item, { key, parent: place }]));
    else for (const [key, value] of Object.entries(current)) stack.push([value, { key, parent: place }]);
  }
  return undefined;
}

const tooWide = (loc: (string | number)[], msg: string, max: number): ValidationItem => ({
  loc,
  msg,
  type: 'too_long',
  ctx: { max_length: max },
});
