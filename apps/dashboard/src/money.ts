import { formatMicrosUsd, parseUsdAmount } from '@crawlgate/core';

/** Revenue totals have no upper bound worth checking here; the parser only needs one. */
const NO_LIMIT = 2n ** 127n;

/** Micro-USD from a decimal USD string the API sent ("0.005", "12.5"). */
export function usdToMicros(usd: string): bigint {
  const parsed = parseUsdAmount(usd, NO_LIMIT);
  if (!parsed.ok) throw new RangeError(`Not a USD amount: ${JSON.stringify(usd)}`);
  return parsed.micros;
}

/** "$0.005", "$1,250.5": the API's exact decimals, with thousands separators for the whole part. */
export function formatUsd(micros: bigint): string {
  const [whole, fraction] = formatMicrosUsd(micros).split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `$${grouped}${fraction === undefined ? '' : `.${fraction}`}`;
}

/** A ratio in 0..1 as a percentage ("25.0%"); a dash when there is nothing to divide by. */
export function formatRatio(ratio: number | null): string {
  return ratio === null || !Number.isFinite(ratio) ? '–' : `${(ratio * 100).toFixed(1)}%`;
}
