/*
 * USD prices as integer micro-USD (bigint). 1 micro-USD = 1e-6 USD = one USDC atomic unit, so a
 * price is also the exact on-chain amount. No float arithmetic anywhere: numbers are read through
 * their shortest decimal text (String(n)), which is exactly what the JSON body held.
 *
 * Checks run in a fixed order and the first failure is reported: type, format, precision, range.
 * So "1.0000001" is a precision error (7 decimals) although it is also above 1.
 */

export const MICROS_PER_USD = 1_000_000n;
export const MAX_PRICE_MICROS = 1_000_000n;
/** Digits after the decimal point that a price may carry (trailing zeros not counted). */
export const PRICE_DECIMALS = 6;
/** Longer strings are a format error: keeps parsing and error bodies small whatever arrives. */
export const MAX_PRICE_STRING_LENGTH = 100;
/**
 * The string form as a JSON Schema pattern (the OpenAPI document's): a sign, digits and one point,
 * with at least one digit. It says nothing of range or precision, which the parser checks.
 */
export const PRICE_STRING_PATTERN = String.raw`^[+-]?(?:\d+\.?\d*|\.\d+)$`;

export type PriceErrorType = 'price_type' | 'price_format' | 'price_range' | 'price_precision';

export type PriceParse =
  { ok: true; micros: bigint } | { ok: false; type: PriceErrorType; msg: string; ctx?: Record<string, unknown> };

// Sign, integer digits, fraction digits. At least one digit is checked separately ("+." is not a price).
const DECIMAL_STRING = /^([+-]?)(\d*)(?:\.(\d*))?$/;
// What String(n) yields for a finite number: "0.005", "-1.5", "1e-7", "1.5e+21".
const NUMBER_TEXT = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/;

/** Parses a price in USD (JSON number or decimal string) into micro-USD, within 0..1 USD. */
export function parsePriceUsd(input: unknown): PriceParse {
  return parseUsdAmount(input, MAX_PRICE_MICROS);
}

/**
 * The same rules for any USD amount from 0 to `maxMicros` (budgets, faucet amounts): one parser,
 * so every amount in the product is read the same way.
 */
export function parseUsdAmount(input: unknown, maxMicros: bigint): PriceParse {
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) return fail('price_type', 'Price must be a finite number');
    return fromNumberText(String(input), maxMicros);
  }
  if (typeof input !== 'string') return fail('price_type', 'Price must be a number or a decimal string');
  if (input.length > MAX_PRICE_STRING_LENGTH) {
    return fail('price_format', `Price must be at most ${MAX_PRICE_STRING_LENGTH} characters`, {
      max_length: MAX_PRICE_STRING_LENGTH,
    });
  }
  const m = DECIMAL_STRING.exec(input);
  const whole = m?.[2] ?? '';
  const fraction = m?.[3] ?? '';
  if (!m || whole.length + fraction.length === 0) {
    return fail('price_format', 'Price must be a decimal number such as "0.005"');
  }
  return fromDigits(m[1] === '-', whole, fraction, maxMicros);
}

/** Renders micro-USD as the shortest decimal string: 5000n → "0.005", 1000000n → "1". */
export function formatMicrosUsd(micros: bigint): string {
  if (micros < 0n) throw new RangeError(`Amount must not be negative: ${micros}`);
  const whole = micros / MICROS_PER_USD;
  const fraction = micros % MICROS_PER_USD;
  if (fraction === 0n) return whole.toString();
  return `${whole}.${trimTrailingZeros(fraction.toString().padStart(PRICE_DECIMALS, '0'))}`;
}

/** Shifts the decimal point of String(n) by its exponent, in text, so 5e-7 stays exactly 5e-7. */
function fromNumberText(text: string, maxMicros: bigint): PriceParse {
  const [, sign, whole, fraction = '', exponent = '0'] = NUMBER_TEXT.exec(text)!;
  const digits = whole + fraction;
  const point = whole.length + Number(exponent);
  if (point <= 0) return fromDigits(sign === '-', '', '0'.repeat(-point) + digits, maxMicros);
  if (point >= digits.length)
    return fromDigits(sign === '-', digits + '0'.repeat(point - digits.length), '', maxMicros);
  return fromDigits(sign === '-', digits.slice(0, point), digits.slice(point), maxMicros);
}

function fromDigits(negative: boolean, whole: string, fraction: string, maxMicros: bigint): PriceParse {
  const significant = trimTrailingZeros(fraction);
  if (significant.length > PRICE_DECIMALS) {
    return fail('price_precision', `Price must have at most ${PRICE_DECIMALS} decimal places`, {
      max_decimals: PRICE_DECIMALS,
    });
  }
  const micros = BigInt(whole || '0') * MICROS_PER_USD + BigInt(significant.padEnd(PRICE_DECIMALS, '0'));
  // "-0" and "-0.000" are zero, hence fine; any other negative is out of range.
  if ((negative && micros !== 0n) || micros > maxMicros) {
    const max = formatMicrosUsd(maxMicros);
    return fail(
      'price_range',
      `${maxMicros === MAX_PRICE_MICROS ? 'Price' : 'Amount'} must be between 0 and ${max} USD`,
      { min: '0', max },
    );
  }
  return { ok: true, micros };
}

function trimTrailingZeros(digits: string): string {
  let end = digits.length;
  while (end > 0 && digits.charCodeAt(end - 1) === 0x30 /* 0 */) end--;
  return digits.slice(0, end);
}

function fail(type: PriceErrorType, msg: string, ctx?: Record<string, unknown>): PriceParse {
  return ctx ? { ok: false, type, msg, ctx } : { ok: false, type, msg };
}
