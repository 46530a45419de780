/*
 * Reading a body another party sent (a site, or an API URL a site named): the core type says
 * which fields a well-behaved peer sends, under which names, so a renamed or dropped field is a
 * compile error where it is read; every value is still `unknown` until the reader has checked it.
 */

/** T's fields, by name, each possibly absent and of any type. */
export type Untrusted<T> = { readonly [K in keyof T]?: unknown };

/** A JSON object read as an untrusted T; undefined for anything else (null, a list, a string). */
export function untrusted<T>(value: unknown): Untrusted<T> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Untrusted<T>) : undefined;
}

/** The JSON kinds a field may have, as `typeof` (and null, arrays) tell them apart. */
export type JsonKind = 'string' | 'number' | 'boolean' | 'null' | 'array' | 'object' | 'undefined';

/** The kind of each type a field may take (distributes over unions: `string | null` → 'string' | 'null'). */
export type KindOf<V> = V extends undefined
  ? 'undefined'
  : V extends null
    ? 'null'
    : V extends string
      ? 'string'
      : V extends number
        ? 'number'
        : V extends boolean
          ? 'boolean'
          : V extends readonly unknown[]
            ? 'array'
            : 'object';

/** For every field of T (none left out, none added), the kinds it may have on the wire. */
export type FieldKinds<T> = { readonly [K in keyof T]-?: readonly KindOf<T[K]>[] };

/**
 * Whether `value` is a JSON object whose every field of T has one of its listed kinds (fields
 * T does not name are ignored). Shallow: nested objects and lists are the caller's to check.
 */
export function hasFieldKinds<T>(value: unknown, kinds: FieldKinds<T>): value is T {
  const body = untrusted<T>(value);
  if (!body) return false;
  return (Object.keys(kinds) as (keyof T & string)[]).every((key) =>
    (kinds[key] as readonly JsonKind[]).includes(kindOf(Object.hasOwn(body, key) ? body[key] : undefined)),
  );
}

function kindOf(value: unknown): JsonKind {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  const kind = typeof value;
  return kind === 'string' || kind === 'number' || kind === 'boolean' || kind === 'undefined' ? kind : 'object';
}
