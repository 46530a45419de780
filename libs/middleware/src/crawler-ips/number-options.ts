/** setTimeout's largest delay: beyond it Node fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A reader of the numeric options under `prefix` (for warnings): a value outside 1..max, or not a
 * number, is the default, with a warning. A bad number would otherwise time every request out (a
 * timer overflows past MAX_TIMER_MS) or never retry.
 */
export function numberOptions<T extends object>(options: T, prefix: string, warn: (message: string) => void) {
  return (name: keyof T & string, fallback: number, max = Number.MAX_SAFE_INTEGER): number => {
    const value: unknown = options[name];
    if (value === undefined) return fallback;
    if (typeof value === 'number' && Number.isFinite(value) && value >= 1 && value <= max) return value;
    warn(`${prefix}.${name} must be a number from 1 to ${max}; using ${fallback}`);
    return fallback;
  };
}
