import { migrationUnderTest } from '../../test/migration-under-test';
import type { TestDatabase } from '../../test/test-database';

/*
 * 20261219000000_deposits_sent: a relayer deposit is written down once signed, before its
 * broadcast, one row per hash sent at its nonce. Deposits before it are recorded nowhere.
 */
describe('migration 20261219000000_deposits_sent', () => {
  const migration = migrationUnderTest('20261219000000_deposits_sent');
  let db: TestDatabase;
  beforeAll(async () => {
    db = await migration.before();
  });
  afterAll(() => db?.dispose());

  it('starts with no deposit recorded, and takes one hash once per chain', async () => {
    const sql = db.database.sql;
    expect(await migration.apply(sql)).toEqual({ applied: ['20261219000000_deposits_sent'] });
    expect(await sql.query('SELECT id FROM channel_deposits')).toEqual([]);

    const insert = (id: string) =>
      sql.query(
        `INSERT INTO channel_deposits (id, chain_id, channel_id, payer, authorization_nonce, tx_hash, nonce)
         VALUES ($1, 31337, $2, $3, $4, $5, 7)`,
        [id, '0x' + '1'.repeat(64), '0x' + '2'.repeat(40), '0x' + '4'.repeat(64), '0x' + '3'.repeat(64)],
      );
    await insert('60000000-0000-4000-8000-000000000001');
    await expect(insert('60000000-0000-4000-8000-000000000002')).rejects.toThrow();
    const rows = await sql.query<{ landed_at: Date | null; created_at: Date }>(
      'SELECT landed_at, created_at FROM channel_deposits',
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].landed_at).toBeNull();
    expect(rows[0].created_at).not.toBeNull();
  });
});
