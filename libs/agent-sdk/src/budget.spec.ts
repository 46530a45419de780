import { Budget } from './budget';

describe('Budget', () => {
  it('reserves, commits and releases in micro-USD, never past the limit', async () => {
    const budget = new Budget(10_000n);
    const first = await budget.reserve(6_000n);
    expect(first).not.toBeNull();
    expect(await budget.reserve(6_000n)).toBeNull();
    await budget.settle(first!, false);
    const second = await budget.reserve(6_000n);
    await budget.settle(second!, true);
    expect(budget.summary()).toEqual({
      usd: '0.006',
      micros: 6_000n,
      payments: 1,
      remainingUsd: '0.004',
      reservedUsd: '0',
    });
    expect(await budget.reserve(4_001n)).toBeNull();
    expect(await budget.reserve(4_000n)).not.toBeNull();
  });

  it('never reserves more than the limit under concurrent reservations', async () => {
    const budget = new Budget(10_000n);
    const reservations = await Promise.all(Array.from({ length: 25 }, () => budget.reserve(1_000n)));
    expect(reservations.filter(Boolean)).toHaveLength(10);
  });

  it('takes money that came back off what was spent, never below zero, and keeps the payment count', async () => {
    const budget = new Budget(10_000n);
    await budget.settle((await budget.reserve(6_000n))!, true);
    await budget.credit(4_000n);
    expect(budget.summary()).toEqual({
      usd: '0.002',
      micros: 2_000n,
      payments: 1,
      remainingUsd: '0.008',
      reservedUsd: '0',
    });
    await budget.credit(5_000n);
    expect(budget.summary()).toMatchObject({ micros: 0n, remainingUsd: '0.01' });
  });

  it('settles a reservation once', async () => {
    const budget = new Budget(10_000n);
    const reservation = (await budget.reserve(1_000n))!;
    await budget.settle(reservation, true);
    await budget.settle(reservation, true);
    expect(budget.summary()).toMatchObject({ micros: 1_000n, payments: 1 });
  });
});
