import { migrationUnderTest } from '../../test/migration-under-test';
import type { TestDatabase } from '../../test/test-database';

/*
 * 20261220000000_deposit_amounts: a deposit's lease and each hash sent for it name its amount and
 * the end of its authorization, so a payer's exact claims count the deposit in flight. Rows written
 * before the upgrade keep neither (null), and are counted by nothing.
 */
describe('migration 20261220000000_deposit_amounts', () => {
  const migration = migrationUnderTest('20261220000000_deposit_amounts');
  let db: TestDatabase;
  beforeAll(async () => {
    db = await migration.before();
  });
  afterAll(() => db?.dispose());

  it('keeps a lease and a deposit sent across it, with no amount, and takes both on new ones', async () => {
    const sql = db.database.sql;
    const payer = (byte: string) => '0x' + byte.repeat(40);
    await sql.query(
      `INSERT INTO deposit_leases (payer, lease_id, nonce) VALUES ($1, '70000000-0000-4000-8000-000000000001', $2)`,
      [payer('1'), '0x' + '2'.repeat(64)],
    );
    expect(await migration.apply(sql)).toEqual({ applied: ['20261220000000_deposit_amounts'] });
    await sql.query(
      `INSERT INTO deposit_leases (payer, lease_id, nonce, amount, valid_before)
       VALUES ($1, '70000000-0000-4000-8000-000000000002', $2, 600000, '2030-01-01T00:00:00Z')`,
      [payer('3'), '0x' + '4'.repeat(64)],
    );
    const rows = await sql.query<{ payer: string; amount: string | null; valid_before: Date | null }>(
      'SELECT payer, amount, valid_before FROM deposit_leases ORDER BY payer',
    );
    expect(rows.map((row) => [row.payer, row.amount === null ? null : BigInt(row.amount), row.valid_before])).toEqual([
      [payer('1'), null, null],
      [payer('3'), 600_000n, new Date('2030-01-01T00:00:00Z')],
    ]);
    await sql.query(
      `INSERT INTO channel_deposits (id, chain_id, channel_id, payer, authorization_nonce, tx_hash, nonce, amount, valid_before)
       VALUES ('70000000-0000-4000-8000-000000000003', 31337, $1, $2, $3, $4, 7, 600000, '2030-01-01T00:00:00Z')`,
      ['0x' + '5'.repeat(64), payer('3'), '0x' + '4'.repeat(64), '0x' + '6'.repeat(64)],
    );
    const [sent] = await sql.query<{ amount: string }>('SELECT amount FROM channel_deposits');
    expect(BigInt(sent.amount)).toBe(600_000n);
  });
});
