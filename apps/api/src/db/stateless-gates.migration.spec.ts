import { migrationUnderTest } from '../../test/migration-under-test';
import type { TestDatabase } from '../../test/test-database';

/*
 * 20261123000000_stateless_gates drops the gates table: gates became signed offers. Applied to a
 * database of the schema before it, with gates, payments and daily counts in it, every payment
 * and every count survives unchanged.
 */
describe('migration 20261123000000_stateless_gates', () => {
  const migration = migrationUnderTest('20261123000000_stateless_gates');
  let db: TestDatabase;
  beforeAll(async () => {
    db = await migration.before();
  });
  afterAll(() => db?.dispose());

  it('keeps every payment and daily count whole, and leaves no gates table', async () => {
    const sql = db.database.sql;
    const publisher = '10000000-0000-4000-8000-000000000001';
    const site = '20000000-0000-4000-8000-000000000002';
    const gate = '30000000-0000-4000-8000-000000000003';
    await sql.query(
      `INSERT INTO publishers (id, email, password_hash, api_key_hash, updated_at) VALUES ($1, 'p@example.com', 'x', $2, now())`,
      [publisher, 'a'.repeat(64)],
    );
    await sql.query(
      `INSERT INTO sites (id, publisher_id, domain, site_token_hash, updated_at) VALUES ($1, $2, 'example.com', $3, now())`,
      [site, publisher, 'b'.repeat(64)],
    );
    await sql.query(
      `INSERT INTO gates (id, site_id, url, resource, price_micros, network, chain_id, asset, pay_to, status, expires_at, paid_at)
       VALUES ($1, $2, '/paid', 'https://example.com/paid', 10000, 'local', 31337, $3, $4, 'paid', now(), now())`,
      [gate, site, '0x' + '1'.repeat(40), '0x' + '2'.repeat(40)],
    );
    await sql.query(
      `INSERT INTO payments (id, gate_id, site_id, publisher_id, url, method, status, chain_id, asset, payer, pay_to, amount, nonce, tx_hash, block_number, token_kid, confirmed_at)
       VALUES ('40000000-0000-4000-8000-000000000004', $1, $2, $3, '/paid', 'authorization', 'confirmed', 31337, $4, $5, $6, 10000, $7, $8, 12, 'kid1', '2026-11-20T10:00:00Z')`,
      [
        gate,
        site,
        publisher,
        '0x' + '1'.repeat(40),
        '0x' + '3'.repeat(40),
        '0x' + '2'.repeat(40),
        '0x' + '4'.repeat(64),
        '0x' + '5'.repeat(64),
      ],
    );
    await sql.query(`INSERT INTO site_daily_counts (site_id, day, gates_created) VALUES ($1, '2026-11-20', 7)`, [site]);
    const payments = () => sql.query('SELECT * FROM payments ORDER BY id');
    const counts = () => sql.query('SELECT * FROM site_daily_counts ORDER BY day');
    const [paymentsBefore, countsBefore] = [await payments(), await counts()];

    expect(await migration.apply(sql)).toEqual({ applied: ['20261123000000_stateless_gates'] });

    expect(await payments()).toEqual(paymentsBefore);
    expect(await counts()).toEqual(countsBefore);
    const tables = await sql.query(
      `SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'gates'`,
    );
    expect(tables).toEqual([]);
  });
});
