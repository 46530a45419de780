import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { RelayRefusalsStore } from './relay-refusals.store';

describe('RelayRefusalsStore', () => {
  let db: TestDatabase;
  let store: RelayRefusalsStore;
  const payer = '0x' + 'ab'.repeat(20);
  const hash = '0x' + '12'.repeat(32);
  beforeAll(async () => {
    db = await createTestDatabase();
    store = new RelayRefusalsStore(db.database);
  });
  afterAll(() => db.dispose());

  it('refuses a payer on its chain for a day, whatever the case of its address, and no one else', async () => {
    expect(await store.isRefused(31337, payer)).toBe(false);
    await store.refuse(31337, payer.toUpperCase().replace('0X', '0x'), hash);
    expect(await store.isRefused(31337, payer)).toBe(true);
    expect(await store.isRefused(8453, payer)).toBe(false);
    expect(await store.isRefused(31337, '0x' + 'cd'.repeat(20))).toBe(false);
    const [row] = await db.database.sql.query<{ hours: number | string }>(
      'SELECT extract(epoch FROM refused_until - now()) / 3600 AS hours FROM relay_refusals WHERE payer = $1',
      [payer],
    );
    expect(Number(row.hours)).toBeGreaterThan(23.9);
  });

  it('deletes refusals that are over, and only those', async () => {
    const other = '0x' + 'ef'.repeat(20);
    await store.refuse(31337, other, hash);
    await db.database.sql.query(
      "UPDATE relay_refusals SET refused_until = now() - interval '1 second' WHERE payer = $1",
      [other],
    );
    expect(await store.isRefused(31337, other)).toBe(false);
    expect(await store.deleteOver()).toBe(1);
    expect(await store.isRefused(31337, payer)).toBe(true);
  });
});
