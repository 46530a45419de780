import { CompileBudget } from './compile-budget';

describe('CompileBudget', () => {
  const clock = (start = 0) => {
    let now = start;
    return { now: () => now, move: (ms: number) => (now += ms) };
  };
  const refused = (budget: CompileBudget, publisher: string) => {
    try {
      budget.assertMayCompile(publisher);
      return false;
    } catch (error) {
      expect(error).toMatchObject({ extra: { charged: false } });
      expect((error as { getStatus(): number }).getStatus()).toBe(503);
      return true;
    }
  };

  it('refuses a publisher past its minute’s bytes, and no other', () => {
    const time = clock();
    const budget = new CompileBudget(100, time.now);
    budget.charge('heavy', 60);
    expect(refused(budget, 'heavy')).toBe(false);
    budget.charge('heavy', 60);
    expect(refused(budget, 'heavy')).toBe(true);
    expect(refused(budget, 'light')).toBe(false);
  });

  it('counts the last minute as much as is left of it, and forgets it after', () => {
    const time = clock();
    const budget = new CompileBudget(100, time.now);
    budget.charge('p', 150);
    time.move(60_000); // the next minute starts: all of the last still counts
    expect(refused(budget, 'p')).toBe(true);
    time.move(30_000); // half of it left: 75
    expect(refused(budget, 'p')).toBe(false);
    budget.charge('p', 30); // 30 + 75
    expect(refused(budget, 'p')).toBe(true);
    time.move(60_000); // two minutes on: only the 30, weighed by half
    expect(refused(budget, 'p')).toBe(false);
    time.move(60_000);
    budget.charge('p', 100);
    expect(refused(budget, 'p')).toBe(false);
  });
});
