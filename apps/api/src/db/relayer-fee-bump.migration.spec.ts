import { migrationUnderTest, seedSite, SEEDED } from '../../test/migration-under-test';
import type { TestDatabase } from '../../test/test-database';

/*
 * 20261216000000_relayer_fee_bump: a payment keeps every hash broadcast for its settlement (a stuck
 * one is re-priced at its nonce) and when its current one was sent. Rows before it replaced nothing,
 * and have no send time (the reconciler takes their claim's).
 */
describe('migration 20261216000000_relayer_fee_bump', () => {
  const migration = migrationUnderTest('20261216000000_relayer_fee_bump');
  let db: TestDatabase;
  beforeAll(async () => {
    db = await migration.before();
  });
  afterAll(() => db?.dispose());

  it('gives the payments before it no replaced hashes and no send time', async () => {
    const sql = db.database.sql;
    await seedSite(sql);
    await sql.query(
      `INSERT INTO payments (id, gate_id, site_id, publisher_id, url, method, status, chain_id, asset, payer, pay_to, amount, nonce, tx_hash)
       VALUES ('40000000-0000-4000-8000-000000000004', '30000000-0000-4000-8000-000000000003', $1, $2, '/paid', 'authorization', 'submitted', 31337, $3, $4, $5, 10000, $6, $7)`,
      [
        SEEDED.site,
        SEEDED.publisher,
        '0x' + '1'.repeat(40),
        '0x' + '2'.repeat(40),
        '0x' + '3'.repeat(40),
        '0x' + '4'.repeat(64),
        '0x' + '5'.repeat(64),
      ],
    );

    expect(await migration.apply(sql)).toEqual({ applied: ['20261216000000_relayer_fee_bump'] });
    const rows = await sql.query<{ replaced_tx_hashes: string[]; tx_sent_at: Date | null }>(
      'SELECT replaced_tx_hashes, tx_sent_at FROM payments',
    );
    expect(rows).toEqual([{ replaced_tx_hashes: [], tx_sent_at: null }]);
  });
});
