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

/** Where a value sits, as a link to its parent: the location's array is built only for an item. */
export interface Place {
  key: string | number;
  parent?: Place;
}

/** A field name a location quotes whole up to this many characters: a body's own names can be as long as it. */
const MAX_SHOWN_KEY = 100;

export function locOf(place: Place): Loc {
  const loc: Loc = [];
  for (let at: Place | undefined = place; at; at = at.parent)
    loc.push(
      typeof at.key === 'string' && at.key.length > MAX_SHOWN_KEY ? `${at.key.slice(0, MAX_SHOWN_KEY)}…` : at.key,
    );
  return loc.reverse();
}

export interface ParsedRequest {
  body?: unknown;
  query?: unknown;
  params?: unknown;
}

/** One 422 item per string (value or field name) holding a forbidden character; empty when all is well. */
export function forbiddenCharacterItems(request: ParsedRequest): ValidationItem[] {
  const items: ValidationItem[] = [];
  const report = (text: string, place: Place, what: string) => {
    const found = FORBIDDEN.exec(text);
    if (!found) return;
    const code = found[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
    items.push({
      loc: locOf(place),
      msg: `${what} must not contain control characters or lone surrogates (found U+${code} at position ${found.index})`,
      type: 'forbidden_character',
    });
  };
  // Depth-first without recursion, body first, children in document order. Only strings and
  // containers are pushed: a body of many numbers costs one look at each, whatever its depth.
  const stack: [unknown, Place][] = [
    [request.params, { key: 'path' }],
    [request.query, { key: 'query' }],
    [request.body, { key: 'body' }],
  ];
  const worthALook = (value: unknown) => typeof value === 'string' || (value !== null && typeof value === 'object');
  while (stack.length > 0 && items.length < MAX_ITEMS) {
    const [value, place] = stack.pop()!;
    if (typeof value === 'string') report(value, place, 'Text');
    else if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index--)
        if (worthALook(value[index])) stack.push([value[index], { key: index, parent: place }]);
    } else if (value !== null && typeof value === 'object') {
      const keys = Object.keys(value);
      for (const key of keys) report(key, { key, parent: place }, 'A field name');
      for (let index = keys.length - 1; index >= 0; index--) {
        const child = (value as Record<string, unknown>)[keys[index]];
        if (worthALook(child)) stack.push([child, { key: keys[index], parent: place }]);
      }
    }
  }
  return items.slice(0, MAX_ITEMS);
}
