import { migrationUnderTest, seedChannel } from '../../test/migration-under-test';
import type { TestDatabase } from '../../test/test-database';

/*
 * 20261218000000_withdrawal_seen: a channel the claimer saw withdrawing stays among its receiver's
 * withdrawing channels past the log window and a restart. Channels before it were seen withdrawing
 * by no record: they are judged from the log window until their next read.
 */
describe('migration 20261218000000_withdrawal_seen', () => {
  const migration = migrationUnderTest('20261218000000_withdrawal_seen');
  let db: TestDatabase;
  beforeAll(async () => {
    db = await migration.before();
  });
  afterAll(() => db?.dispose());

  it('records no channel seen withdrawing', async () => {
    const sql = db.database.sql;
    await seedChannel(sql);

    expect(await migration.apply(sql)).toEqual({ applied: ['20261218000000_withdrawal_seen'] });
    const rows = await sql.query<{ withdrawal_seen: boolean }>('SELECT withdrawal_seen FROM payment_channels');
    expect(rows.map((row) => row.withdrawal_seen)).toEqual([false]);
  });
});
