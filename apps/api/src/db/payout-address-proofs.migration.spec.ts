import { migrationUnderTest } from '../../test/migration-under-test';
import type { TestDatabase } from '../../test/test-database';

/*
 * 20261209000000_payout_address_proofs: a payout address is one publisher's unless each naming it
 * proved it. Addresses several publishers named before it had no proof, so none of them keeps it:
 * each must name it again (the first one without a proof, the others with one), and meanwhile their
 * sites cannot charge (they would pay the address for another publisher's payers).
 */
describe('migration 20261209000000_payout_address_proofs', () => {
  const migration = migrationUnderTest('20261209000000_payout_address_proofs');
  let db: TestDatabase;
  beforeAll(async () => {
    db = await migration.before();
  });
  afterAll(() => db?.dispose());

  it('drops an address several publishers named, in any case, and keeps one named once', async () => {
    const sql = db.database.sql;
    const shared = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
    const single = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';
    const publishers: [string, string | null][] = [
      ['10000000-0000-4000-8000-000000000001', shared],
      ['10000000-0000-4000-8000-000000000002', shared.toLowerCase()],
      ['10000000-0000-4000-8000-000000000003', single],
      ['10000000-0000-4000-8000-000000000004', null],
    ];
    for (const [id, payout] of publishers)
      await sql.query(
        `INSERT INTO publishers (id, email, password_hash, api_key_hash, payout_address, updated_at)
         VALUES ($1, $2, 'x', $3, $4, now())`,
        [id, `${id}@example.com`, id.replace(/-/g, '').padEnd(64, '0'), payout],
      );

    expect(await migration.apply(sql)).toEqual({ applied: ['20261209000000_payout_address_proofs'] });
    expect(await sql.query('SELECT id, payout_address, payout_address_proven FROM publishers ORDER BY id')).toEqual([
      { id: publishers[0][0], payout_address: null, payout_address_proven: false },
      { id: publishers[1][0], payout_address: null, payout_address_proven: false },
      { id: publishers[2][0], payout_address: single, payout_address_proven: false },
      { id: publishers[3][0], payout_address: null, payout_address_proven: false },
    ]);
  });
});
