import { migrationUnderTest, SEEDED, seedSite } from '../../test/migration-under-test';
import type { TestDatabase } from '../../test/test-database';

/*
 * 20261129000000_batch_settlement: the site switch (off for sites already there), voucher payments
 * (one per channel and cumulative total, exact payments untouched), channels and claims. Applied to
 * a database of the schema before it, with a paid site in it.
 */
describe('migration 20261129000000_batch_settlement', () => {
  const migration = migrationUnderTest('20261129000000_batch_settlement');
  let db: TestDatabase;
  beforeAll(async () => {
    db = await migration.before();
  });
  afterAll(() => db?.dispose());

  it('keeps payments whole, leaves sites off, and takes one payment per voucher', async () => {
    const sql = db.database.sql;
    const { publisher, site } = SEEDED;
    await seedSite(sql);
    const address = (digit: string) => '0x' + digit.repeat(40);
    await sql.query(
      `INSERT INTO payments (id, gate_id, site_id, publisher_id, url, method, status, chain_id, asset, payer, pay_to, amount, nonce, tx_hash, block_number, token_kid, confirmed_at)
       VALUES ('40000000-0000-4000-8000-000000000004', '30000000-0000-4000-8000-000000000003', $1, $2, '/paid', 'authorization', 'confirmed', 31337, $3, $4, $5, 10000, $6, $7, 12, 'kid1', '2026-11-20T10:00:00Z')`,
      [site, publisher, address('1'), address('3'), address('2'), '0x' + '4'.repeat(64), '0x' + '5'.repeat(64)],
    );
    const payments = () => sql.query('SELECT * FROM payments ORDER BY id');
    const before = await payments();

    expect(await migration.apply(sql)).toEqual({ applied: ['20261129000000_batch_settlement'] });
    expect((await payments()).map(({ channel_id: _c, cumulative_amount: _a, ...rest }) => rest)).toEqual(before);
    expect(await sql.query('SELECT batch_settlement FROM sites')).toEqual([{ batch_settlement: false }]);

    const voucher = (id: string, gate: string, cumulative: number) =>
      sql.query(
        `INSERT INTO payments (id, gate_id, site_id, publisher_id, url, method, status, chain_id, asset, payer, pay_to, amount, channel_id, cumulative_amount)
         VALUES ($1, $2, $3, $4, '/v', 'voucher', 'confirmed', 31337, $5, $6, $7, 10000, $8, $9)`,
        [id, gate, site, publisher, address('1'), address('3'), address('2'), '0x' + '6'.repeat(64), cumulative],
      );
    await voucher('40000000-0000-4000-8000-000000000005', '30000000-0000-4000-8000-000000000005', 10000);
    await expect(
      voucher('40000000-0000-4000-8000-000000000006', '30000000-0000-4000-8000-000000000006', 10000),
    ).rejects.toThrow(/duplicate key|unique/i);
    await voucher('40000000-0000-4000-8000-000000000007', '30000000-0000-4000-8000-000000000007', 20000);
  });
});
