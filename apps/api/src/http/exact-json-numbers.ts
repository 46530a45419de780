/*
 * JSON numbers taken only as written. JSON.parse rounds each number to the nearest double before
 * any check reads it: 1e-400 becomes 0 (a price of "free"), 1.0000000000000001 becomes 1 (within
 * the limit it exceeded). A body holding a number that its double does not spell back exactly (as
 * String(n) writes it, the text every reader of ours goes by) is refused instead.
 */

/** The first number literal in the JSON `text` (outside strings) whose double is not its value, if any. */
export function firstInexactNumber(text: string): string | undefined {
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
      continue;
    }
    if (c === QUOTE) {
      inString = true;
      continue;
    }
    if (c !== MINUS && !(c >= ZERO && c <= NINE)) continue;
    let end = i + 1;
    let plain = c !== MINUS; // digits alone: an integer of up to 15 digits is always held exactly
    while (end < text.length && isNumberChar(text.charCodeAt(end))) {
      const d = text.charCodeAt(end);
      if (d < ZERO || d > NINE) plain = false;
      end++;
    }
    const literal = text.slice(i, end);
    if (!(plain && end - i <= 15) && !sameDecimal(literal, String(Number(literal)))) return literal;
    i = end - 1;
  }
  return undefined;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;

/** Digits, sign, point and exponent: what a JSON number is made of. */
function isNumberChar(c: number): boolean {
  return (c >= ZERO && c <= NINE) || c === MINUS || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45;
}

/** Whether two number texts (JSON's, or String(n)'s) are the same decimal value; -0 is 0. */
function sameDecimal(a: string, b: string): boolean {
  const x = decimalOf(a);
  const y = decimalOf(b);
  return (
    x !== undefined &&
    y !== undefined &&
    x.negative === y.negative &&
    x.digits === y.digits &&
    x.exponent === y.exponent
  );
}

/** sign × digits × 10^exponent, with no leading or trailing zero in digits ("" for zero, never negative). */
function decimalOf(text: string): { negative: boolean; digits: string; exponent: number } | undefined {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) return undefined;
  const [, sign, whole, fraction = '', exponent = '0'] = m;
  // Loops, not /0+$/: a regex anchored at the end retries from every zero of a long run, and a
  // body of one 256 KB number would hold the event loop for tens of seconds.
  const all = whole + fraction;
  let start = 0;
  while (start < all.length && all.charCodeAt(start) === ZERO) start++;
  let end = all.length;
  while (end > start && all.charCodeAt(end - 1) === ZERO) end--;
  if (start === end) return { negative: false, digits: '', exponent: 0 };
  return {
    negative: sign === '-',
    digits: all.slice(start, end),
    exponent: Number(exponent) - fraction.length + (all.length - end),
  };
}
