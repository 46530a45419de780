import { Budget } from './budget';

describe('Budget', () => {
  it('reserves, commits and releases in micro-USD, never past the limit', () => {
    const budget = new Budget(10_000n);
    expect(budget.reserve(6_000n)).toBe(true);
    expect(budget.reserve(6_000n)).toBe(false);
    budget.release(6_000n);
    expect(budget.reserve(6_000n)).toBe(true);
    budget.commit(6_000n);
    expect(budget.summary()).toEqual({ usd: '0.006', micros: 6_000n, payments: 1, remainingUsd: '0.004' });
    expect(budget.reserve(4_001n)).toBe(false);
    expect(budget.reserve(4_000n)).toBe(true);
  });
});
