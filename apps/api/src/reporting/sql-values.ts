/*
 * Raw rows come back typed by the driver: a count or a sum may arrive as bigint, number, string
 * or Decimal depending on PGlite or node-postgres and on the SQL type. The queries cast to int or
 * text, and these read whatever arrives all the same.
 */

export function toBigInt(value: unknown): bigint {
  if (value === null || value === undefined) return 0n;
  if (typeof value === 'bigint') return value;
  // A number past 2^53 has already lost digits: refuse it rather than report a rounded sum.
  const text = typeof value === 'number' && !Number.isSafeInteger(value) ? '' : String(value);
  if (/^-?\d+$/.test(text)) return BigInt(text);
  throw new TypeError(`Expected an integer from the database, got ${String(value)}`);
}

export const toCount = (value: unknown): number => Number(toBigInt(value));
