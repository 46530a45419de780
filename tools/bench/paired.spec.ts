import { goalsTable, pairedGoals } from './goals';
import { verdictOf, type PairedRow } from './paired';

const row = (median: number, goal?: number, unjudged?: string): PairedRow => ({
  figure: 'Fastify: person',
  baselineName: 'Fastify route, bare',
  paired: { baseline: [100], ours: [100 * median], ratios: [median], median, min: median, max: median },
  goal,
  unjudged,
});

describe('verdictOf', () => {
  it('meets a goal the ratio reaches, and misses one it does not', () => {
    expect(verdictOf(row(0.98, 0.97))).toBe('met');
    expect(verdictOf(row(0.96, 0.97))).toBe('missed');
  });

  it('does not judge a ratio that reached its goal against a baseline held down, and still misses one below it', () => {
    expect(verdictOf(row(1.06, 0.97, 'held down'))).toBe('not judged');
    expect(verdictOf(row(0.9, 0.97, 'held down'))).toBe('missed');
  });

  it('has nothing to judge without a goal', () => {
    expect(verdictOf(row(0.5, undefined, 'held down'))).toBe('met');
  });
});

describe('goalsTable', () => {
  it('counts a figure not judged apart from those met and missed, and says why', () => {
    const goals = pairedGoals([row(0.98, 0.97), row(0.9, 0.97), row(1.06, 0.97, 'the bare server was busy 0.83')]);
    expect(goals.map((goal) => [goal.met, goal.unjudged])).toEqual([
      [true, undefined],
      [false, undefined],
      [false, 'the bare server was busy 0.83'],
    ]);
    const table = goalsTable(goals);
    expect(table).toContain('| met |');
    expect(table).toContain('| **missed** |');
    expect(table).toContain('| **not judged**: the bare server was busy 0.83 |');
    expect(table).toContain('1 of 3 met, 1 not judged.');
  });
});
