import type { ValidationItem } from '@crawlgate/core';

/** A 422's items keyed by field ("default_price_usd", "rules.2.path"); the rest stay general. */
export interface FieldErrors {
  byField: Record<string, string>;
  general: string[];
}

export const NO_FIELD_ERRORS: FieldErrors = Object.freeze({ byField: {}, general: [] });

/**
 * Puts each server-side validation message next to the field it names. `path_pattern` is the
 * spec's alias of a rule's `path`, so its message belongs to the same field.
 */
export function fieldErrors(items: readonly ValidationItem[]): FieldErrors {
  const result: FieldErrors = { byField: {}, general: [] };
  for (const item of items) {
    const loc = item.loc[0] === 'body' ? item.loc.slice(1) : item.loc;
    const field = loc.map((part) => (part === 'path_pattern' ? 'path' : String(part))).join('.');
    if (field === '' || item.loc[0] === 'query') result.general.push(item.msg);
    else result.byField[field] ??= item.msg;
  }
  return result;
}
