import { migrationUnderTest, seedChannel } from '../../test/migration-under-test';
import type { TestDatabase } from '../../test/test-database';

/*
 * 20261221000000_harmless_withdrawals: a verdict that a channel's pending withdrawal takes nothing
 * charged outlives a restart. Channels before it carry none: each is judged once more.
 */
describe('migration 20261221000000_harmless_withdrawals', () => {
  const migration = migrationUnderTest('20261221000000_harmless_withdrawals');
  let db: TestDatabase;
  beforeAll(async () => {
    db = await migration.before();
  });
  afterAll(() => db?.dispose());

  it('gives the channels before it no verdict', async () => {
    const sql = db.database.sql;
    await seedChannel(sql);

    expect(await migration.apply(sql)).toEqual({ applied: ['20261221000000_harmless_withdrawals'] });
    const rows = await sql.query<{ block: string | null; covers: string | null }>(
      'SELECT harmless_withdrawal_block AS block, harmless_withdrawal_covers AS covers FROM payment_channels',
    );
    expect(rows).toEqual([{ block: null, covers: null }]);
  });
});
