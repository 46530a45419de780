const DECIMALS = 4;
const SCALE = 10n ** BigInt(DECIMALS);

/**
 * paid / created as a decimal string with 4 decimals, rounded half up, in integer arithmetic so
 * the same counts always give the same text: 2 of 3 → "0.6667". "0" when nothing was created.
 * Not capped at 1: a gate created just before the range and paid inside it counts as paid only.
 */
export function formatConversion(paid: number, created: number): string {
  if (created <= 0) return '0';
  const scaled = (BigInt(paid) * SCALE * 2n + BigInt(created)) / (BigInt(created) * 2n);
  return `${scaled / SCALE}.${(scaled % SCALE).toString().padStart(DECIMALS, '0')}`;
}
