import { migrationUnderTest, SEEDED, seedSite } from '../../test/migration-under-test';
import type { TestDatabase } from '../../test/test-database';

/*
 * 20261127000000_siwx_nonces adds the table of spent sign-in-with-x nonces. Applied to a database of
 * the schema before it, with a paid site in it: nothing else changes, a nonce is taken once, and
 * deleting the site deletes its nonces.
 */
describe('migration 20261127000000_siwx_nonces', () => {
  const migration = migrationUnderTest('20261127000000_siwx_nonces');
  let db: TestDatabase;
  beforeAll(async () => {
    db = await migration.before();
  });
  afterAll(() => db?.dispose());

  it('keeps payments whole, takes each nonce once, and goes with its site', async () => {
    const sql = db.database.sql;
    const { publisher, site } = SEEDED;
    await seedSite(sql);
    await sql.query(
      `INSERT INTO payments (id, gate_id, site_id, publisher_id, url, method, status, chain_id, asset, payer, pay_to, amount, nonce, tx_hash, block_number, token_kid, confirmed_at)
       VALUES ('40000000-0000-4000-8000-000000000004', '30000000-0000-4000-8000-000000000003', $1, $2, '/paid', 'authorization', 'confirmed', 31337, $3, $4, $5, 10000, $6, $7, 12, 'kid1', '2026-11-20T10:00:00Z')`,
      [
        site,
        publisher,
        '0x' + '1'.repeat(40),
        '0x' + '3'.repeat(40),
        '0x' + '2'.repeat(40),
        '0x' + '4'.repeat(64),
        '0x' + '5'.repeat(64),
      ],
    );
    const payments = () => sql.query('SELECT * FROM payments ORDER BY id');
    const before = await payments();

    expect(await migration.apply(sql)).toEqual({ applied: ['20261127000000_siwx_nonces'] });
    expect(await payments()).toEqual(before);

    const insert = () =>
      sql.query(`INSERT INTO siwx_nonces (nonce, site_id, expires_at) VALUES ($1, $2, now() + interval '5 minutes')`, [
        'ab'.repeat(54),
        site,
      ]);
    await insert();
    await expect(insert()).rejects.toThrow(/duplicate key|unique/i);
    await expect(
      sql.query(
        `INSERT INTO siwx_nonces (nonce, site_id, expires_at) VALUES ('cd', '20000000-0000-4000-8000-000000000009', now())`,
      ),
    ).rejects.toThrow(/foreign key/i);

    await sql.query('DELETE FROM sites WHERE id = $1', [site]);
    expect(await sql.query('SELECT nonce FROM siwx_nonces')).toEqual([]);
  });
});
