import { HttpException } from '@nestjs/common';
import { parsePriceUsd, validatePathPattern, type ValidationItem } from '@crawlgate/core';
import type { ValidationError } from 'class-validator';

export type { ValidationItem };

export class ValidationFailed extends HttpException {
  constructor(readonly items: ValidationItem[]) {
    super({ detail: shownItems(items) }, 422);
  }
}

/** The most problems a 422 lists: a body of thousands of bad items is not answered item by item. */
export const MAX_VALIDATION_ITEMS = 20;

/** `items` up to MAX_VALIDATION_ITEMS, then one saying how many more there were. */
function shownItems(items: ValidationItem[]): ValidationItem[] {
  if (items.length <= MAX_VALIDATION_ITEMS) return items;
  const more = items.length - MAX_VALIDATION_ITEMS;
  return [
    ...items.slice(0, MAX_VALIDATION_ITEMS),
    { loc: ['body'], msg: `${more} more problems not listed`, type: 'too_many_errors' },
  ];
}

/** A list or object of more than this many entries is not quoted back as a problem's input. */
const MAX_SHOWN_ENTRIES = 10;

/** Whether a value is small enough to quote back: not a long list nor a wide object. */
const shownAsInput = (value: unknown) =>
  value === null ||
  typeof value !== 'object' ||
  (Array.isArray(value) ? value.length : Object.keys(value).length) <= MAX_SHOWN_ENTRIES;

/** class-validator constraint names → stable machine-readable `type`s. */
const TYPES: Record<string, string> = {
  isDefined: 'missing',
  isNotEmpty: 'missing',
  isString: 'string_type',
  isInt: 'int_type',
  isBoolean: 'bool_type',
  isArray: 'list_type',
  isObject: 'dict_type',
  isEmail: 'email_format',
  plainEmailText: 'email_format',
  isUrl: 'url_format',
  minLength: 'string_too_short',
  maxLength: 'string_too_long',
  arrayMaxSize: 'too_long',
  min: 'greater_than_equal',
  max: 'less_than_equal',
  whitelistValidation: 'extra_forbidden',
  nestedValidation: 'dict_type',
  evmAddress: 'evm_address',
  provesNamedPayoutAddress: 'payout_address_missing',
};

/** Custom constraints whose type and context come from the parser that rejected the value. */
const DETAILED: Record<string, (value: unknown) => Pick<ValidationItem, 'type' | 'ctx'> | undefined> = {
  priceUsd: (value) => {
    const parsed = parsePriceUsd(value);
    return parsed.ok ? undefined : { type: parsed.type, ctx: parsed.ctx };
  },
  pathPattern: (value) => {
    const problem = typeof value === 'string' ? validatePathPattern(value) : null;
    return problem ? { type: problem.type } : undefined;
  },
};

/**
 * Fields whose value an answer never shows (any password, secret or token: `new_password`,
 * `current_password`, an access token; a payment, its signature, a sign-in proof): error bodies end up in logs,
 * HAR files and proxies.
 */
const UNSHOWN_FIELD = /password|secret|token|payment|signature|authorization|proof/i;

/** What a value is ("array", "object", "string", "null"...), to name it without showing it. */
export const kindOf = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;

/**
 * Which failure to report when a field fails several checks: absence, then not a list (a list's
 * elements are checked too: "nope" is no list before it is no object), then wrong type, then the rest.
 */
const rank = (name: string) =>
  name === 'isDefined' ? 0 : name === 'isArray' ? 1 : TYPES[name]?.endsWith('_type') ? 2 : 3;

/** One item per failing field, the most basic failure, so `"abc"` for a list says "list_type", not "too_long". */
export function toValidationItems(errors: ValidationError[], loc: (string | number)[] = ['body']): ValidationItem[] {
  return errors.flatMap((error) => {
    const here = [...loc, /^\d+$/.test(error.property) ? Number(error.property) : error.property];
    const [first] = Object.entries(error.constraints ?? {}).sort(([a], [b]) => rank(a) - rank(b));
    const own = (first ? [first] : []).map(([name, msg]): ValidationItem => {
      const detailed = DETAILED[name]?.(error.value);
      return {
        loc: here,
        msg,
        type: detailed?.type ?? TYPES[name] ?? name,
        // Nor what a field nobody declared holds: it may be a misspelt password.
        ...(error.value === undefined ||
        UNSHOWN_FIELD.test(error.property) ||
        name === 'whitelistValidation' ||
        !shownAsInput(error.value)
          ? {}
          : { input: error.value }),
        ...(detailed?.ctx ? { ctx: detailed.ctx } : {}),
      };
    });
    return [...own, ...toValidationItems(error.children ?? [], here)];
  });
}
