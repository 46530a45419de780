import { format } from './measure';
import { printedVerdict, verdictOf, type PairedRow } from './paired';

/** One goal of the issues, as one run reached it: a row of the summary at the top of RESULTS.md. */
export interface Goal {
  figure: string;
  /** The figure reached, as printed: a ratio with its spread, a rate, a size. */
  reached: string;
  /** The goal as printed: "≥ 0.97", "≤ 250 MB". */
  goal: string;
  met: boolean;
  /** Why a figure that reached its goal is not counted as met (see PairedRow.unjudged). */
  unjudged?: string;
}

/** What a bench prints, and the goals it measured: its section of RESULTS.md and its rows of the summary. */
export interface BenchResult {
  report: string;
  goals: Goal[];
}

/** The goals of the paired rows that have one: the median ratio, its spread beside it. */
export const pairedGoals = (rows: PairedRow[]): Goal[] =>
  rows.flatMap((row) => {
    if (row.goal === undefined) return [];
    const verdict = verdictOf(row);
    return [
      {
        figure: `${row.figure} ÷ ${row.baselineName}`,
        reached: `${format(row.paired.median, 2)} (${format(row.paired.min, 2)}–${format(row.paired.max, 2)})`,
        goal: `≥ ${format(row.goal, 2)}`,
        met: verdict === 'met',
        unjudged: verdict === 'not judged' ? row.unjudged : undefined,
      },
    ];
  });

/** The summary: every goal of the benches that ran, in the order they ran, each from this one run. */
export function goalsTable(goals: Goal[]): string {
  const met = goals.filter((goal) => goal.met).length;
  const unjudged = goals.filter((goal) => goal.unjudged !== undefined).length;
  const verdict = (goal: Goal) =>
    goal.met
      ? 'met'
      : goal.unjudged === undefined
        ? printedVerdict('missed')
        : `${printedVerdict('not judged')}: ${goal.unjudged}`;
  return [
    '## Goals, as this run reached them',
    '',
    '| figure | reached | goal | |',
    '|---|---:|---|---|',
    ...goals.map((goal) => `| ${goal.figure} | ${goal.reached} | ${goal.goal} | ${verdict(goal)} |`),
    '',
    `${met} of ${goals.length} met${unjudged ? `, ${unjudged} not judged` : ''}. Each figure comes from its own section of this run; ratios are medians of paired rounds (spread in brackets) unless the section says otherwise.`,
  ].join('\n');
}
