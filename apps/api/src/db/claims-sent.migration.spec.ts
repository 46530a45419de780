import { migrationUnderTest } from '../../test/migration-under-test';
import type { TestDatabase } from '../../test/test-database';

/*
 * 20261212000000_claims_sent: a claim is now written down before its broadcast and marked landed
 * once mined. Rows written before it were written once their claim had landed: they stay landed
 * (a settle still sends them on), with no nonce.
 */
describe('migration 20261212000000_claims_sent', () => {
  const migration = migrationUnderTest('20261212000000_claims_sent');
  let db: TestDatabase;
  beforeAll(async () => {
    db = await migration.before();
  });
  afterAll(() => db?.dispose());

  it('keeps the claims recorded before it as landed, when they were recorded', async () => {
    const sql = db.database.sql;
    const address = (digit: string) => '0x' + digit.repeat(40);
    for (const [id, settle] of [
      ['50000000-0000-4000-8000-000000000001', null],
      ['50000000-0000-4000-8000-000000000002', '0x' + '9'.repeat(64)],
    ] as const)
      await sql.query(
        `INSERT INTO channel_claims (id, chain_id, receiver, token, tx_hash, channels, amount, settle_tx_hash, created_at)
         VALUES ($1, 31337, $2, $3, $4, 2, 30000, $5, '2026-12-01T10:00:00Z')`,
        [id, address('2'), address('1'), '0x' + id.slice(-1).repeat(64), settle],
      );

    expect(await migration.apply(sql)).toEqual({ applied: ['20261212000000_claims_sent'] });
    const rows = await sql.query<{ id: string; nonce: number | null; landed_at: Date; settle_tx_hash: string | null }>(
      'SELECT id, nonce, landed_at, settle_tx_hash FROM channel_claims ORDER BY id',
    );
    expect(rows.map((row) => [row.id, row.nonce, new Date(row.landed_at).toISOString(), row.settle_tx_hash])).toEqual([
      ['50000000-0000-4000-8000-000000000001', null, '2026-12-01T10:00:00.000Z', null],
      ['50000000-0000-4000-8000-000000000002', null, '2026-12-01T10:00:00.000Z', '0x' + '9'.repeat(64)],
    ]);
  });
});
