import { format } from './measure';
import { meetsGoal, type PairedRow } from './paired';

/** One goal of the issues, as one run reached it: a row of the summary at the top of RESULTS.md. */
export interface Goal {
  figure: string;
  /** The figure reached, as printed: a ratio with its spread, a rate, a size. */
  reached: string;
  /** The goal as printed: "≥ 0.97", "≤ 250 MB". */
  goal: string;
  met: boolean;
}

/** What a bench prints, and the goals it measured: its section of RESULTS.md and its rows of the summary. */
export interface BenchResult {
  report: string;
  goals: Goal[];
}

/** The goals of the paired rows that have one: the median ratio, its spread beside it. */
export const pairedGoals = (rows: PairedRow[]): Goal[] =>
  rows.flatMap((row) =>
    row.goal === undefined
      ? []
      : [
          {
            figure: `${row.figure} ÷ ${row.baselineName}`,
            reached: `${format(row.paired.median, 2)} (${format(row.paired.min, 2)}–${format(row.paired.max, 2)})`,
            goal: `≥ ${format(row.goal, 2)}`,
            met: meetsGoal(row),
          },
        ],
  );

/** The summary: every goal of the benches that ran, in the order they ran, each from this one run. */
export function goalsTable(goals: Goal[]): string {
  const missed = goals.filter((goal) => !goal.met).length;
  return [
    '## Goals, as this run reached them',
    '',
    '| figure | reached | goal | |',
    '|---|---:|---|---|',
    ...goals.map(
      ({ figure, reached, goal, met }) => `| ${figure} | ${reached} | ${goal} | ${met ? 'met' : '**missed**'} |`,
    ),
    '',
    `${goals.length - missed} of ${goals.length} met. Each figure comes from its own section of this run; ratios are medians of paired rounds (spread in brackets) unless the section says otherwise.`,
  ].join('\n');
}
