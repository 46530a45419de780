import { format } from './measure';

/**
 * Paired rounds: baseline and ours alternate (B, G, B, G, B, G), so a slow spell on a shared
 * machine hits both sides of a pair rather than one side of the comparison. Each pair gives a
 * ratio; the figure is the median of the ratios, printed with their spread.
 */
export const PAIRS = 3;
export const ROUND_SECONDS = 5;

export interface Paired {
  baseline: number[];
  ours: number[];
  /** ours ÷ baseline of each pair, in run order. */
  ratios: number[];
  median: number;
  min: number;
  max: number;
}

/** `measurePair` runs the baseline's round, then ours, and returns their rates (per second; higher is better). */
export async function alternate(
  measurePair: () => Promise<{ baseline: number; ours: number }>,
  pairs = PAIRS,
): Promise<Paired> {
  const baseline: number[] = [];
  const ours: number[] = [];
  for (let i = 0; i < pairs; i++) {
    const rates = await measurePair();
    baseline.push(rates.baseline);
    ours.push(rates.ours);
  }
  const ratios = ours.map((rate, i) => rate / baseline[i]);
  return { baseline, ours, ratios, median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

export interface PairedRow {
  figure: string;
  baselineName: string;
  paired: Paired;
  /** What the server under test did with the rounds' time (medians), baseline and ours, when measured. */
  server?: { baseline: ServerTime; ours: ServerTime };
  /** The least ratio the figure should reach, if it has a goal. */
  goal?: number;
  /** Why a ratio at or above its goal cannot be taken as met (a baseline held down: its true ratio is lower). */
  unjudged?: string;
}

/** Shares of a round's wall time: running on a CPU, and waiting for one that other work held. */
export interface ServerTime {
  busy: number;
  waiting: number;
}

export type Verdict = 'met' | 'missed' | 'not judged';

/** Met when the ratio reaches the goal, unless the row says why that cannot be trusted; a ratio below it is missed whatever held the baseline down. */
export function verdictOf(row: PairedRow): Verdict {
  if (row.goal === undefined) return 'met'; // nothing to reach
  if (row.paired.median < row.goal) return 'missed';
  return row.unjudged === undefined ? 'met' : 'not judged';
}

/** A markdown table: per row, the median rates of each side, the median ratio, its spread and the goal. */
export function pairedTable(title: string, unit: string, rows: PairedRow[]): string {
  const withServer = rows.some((row) => row.server);
  const time = ({ busy, waiting }: ServerTime) => `${format(busy, 2)} (${format(waiting, 2)})`;
  return [
    `### ${title}`,
    '',
    `| figure | baseline | baseline ${unit} (median) | ours ${unit} (median) | ratio ours ÷ baseline (median of ${PAIRS}) | spread (min–max) |${withServer ? ' server busy (waiting for a CPU), baseline / ours |' : ''} goal |`,
    `|---|---|---:|---:|---:|---|${withServer ? '---|' : ''}---|`,
    ...rows.map((row) => {
      const { paired, goal, server } = row;
      const verdict = goal === undefined ? '—' : `≥ ${format(goal, 2)} ${printedVerdict(verdictOf(row))}`;
      const share = withServer ? ` ${server ? `${time(server.baseline)} / ${time(server.ours)}` : '—'} |` : '';
      return `| ${row.figure} | ${row.baselineName} | ${format(median(paired.baseline))} | ${format(median(paired.ours))} | **${format(paired.median, 2)}** | ${format(paired.min, 2)}–${format(paired.max, 2)} |${share} ${verdict} |`;
    }),
  ].join('\n');
}

export const printedVerdict = (verdict: Verdict) => (verdict === 'met' ? 'met' : `**${verdict}**`);
