/*
 * A refusal carries what a site said (its reason, its detail, the offers it named): a site may say
 * a megabyte of it. What reaches the assistant, and the operator's log, is kept short whatever the
 * site sent.
 */

/** The most characters of one string in a refusal. */
export const MAX_REFUSAL_CHARS = 1_000;
/** The most items of one list in a refusal. */
export const MAX_REFUSAL_ITEMS = 10;

/** `value` (JSON) with every string cut to MAX_REFUSAL_CHARS and every list to MAX_REFUSAL_ITEMS, at any depth. */
export function bounded<T>(value: T): T {
  return cut(value) as T;
}

function cut(value: unknown): unknown {
  if (typeof value === 'string')
    return value.length <= MAX_REFUSAL_CHARS ? value : `${value.slice(0, MAX_REFUSAL_CHARS - 1)}…`;
  if (Array.isArray(value)) return value.slice(0, MAX_REFUSAL_ITEMS).map(cut);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, cut(item)]));
  return value;
}
