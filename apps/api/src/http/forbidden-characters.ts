import type { ValidationItem } from './validation-items';

/*
 * No field of ours takes control characters (C0, DEL, C1) or lone surrogates: PostgreSQL refuses
 * NUL in text, and none of the others belongs in a name, an email, a path or a key. Every string
 * a request parsed (body, query and path parameters, object keys too) is checked in one place,
 * before any handler runs, so no endpoint can forget.
 */

const FORBIDDEN = /[\p{Cc}\p{Cs}]/u;
/** Enough to show what is wrong; a body full of NULs must not make the answer huge. */
const MAX_ITEMS = 10;

type Loc = (string | number)[];

export interface ParsedRequest {
  body?: unknown;
  query?: unknown;
  params?: unknown;
}

/** One 422 item per string (value or field name) holding a forbidden character; empty when all is well. */
export function forbiddenCharacterItems(request: ParsedRequest): ValidationItem[] {
  const items: ValidationItem[] = [];
  const report = (text: string, loc: Loc, what: string) => {
    const found = FORBIDDEN.exec(text);
    if (!found) return;
    const code = found[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
    items.push({
      loc,
      msg: `${what} must not contain control characters or lone surrogates (found U+${code} at position ${found.index})`,
      type: 'forbidden_character',
    });
  };
  // Depth-first without recursion, body first, children in document order.
  const stack: [unknown, Loc][] = [
    [request.params, ['path']],
    [request.query, ['query']],
    [request.body, ['body']],
  ];
  while (stack.length > 0 && items.length < MAX_ITEMS) {
    const [value, loc] = stack.pop()!;
    if (typeof value === 'string') report(value, loc, 'Text');
    else if (value !== null && typeof value === 'object') {
      const entries: [string | number, unknown][] = Array.isArray(value)
        ? value.map((child, index) => [index, child])
        : Object.entries(value);
      for (const [key] of entries) if (typeof key === 'string') report(key, [...loc, key], 'A field name');
      for (const [key, child] of entries.reverse()) stack.push([child, [...loc, key]]);
    }
  }
  return items.slice(0, MAX_ITEMS);
}
