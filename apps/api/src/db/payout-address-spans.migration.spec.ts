import { migrationUnderTest } from '../../test/migration-under-test';
import type { TestDatabase } from '../../test/test-database';

/*
 * 20261215000000_payout_address_spans: a publisher's payout address now has spans of time, in place
 * of the time of its last change. A publisher's address before it is taken as its payout address
 * since the publisher was created; one with no address has no span.
 */
describe('migration 20261215000000_payout_address_spans', () => {
  const migration = migrationUnderTest('20261215000000_payout_address_spans');
  let db: TestDatabase;
  beforeAll(async () => {
    db = await migration.before();
  });
  afterAll(() => db?.dispose());

  it('opens a span for each payout address, from its publisher’s creation, and drops payout_changed_at', async () => {
    const sql = db.database.sql;
    const named = '30000000-0000-4000-8000-000000000001';
    const none = '30000000-0000-4000-8000-000000000002';
    for (const [id, payout] of [
      [named, '0xAbCdEf0000000000000000000000000000000001'],
      [none, null],
    ] as const)
      await sql.query(
        `INSERT INTO publishers (id, email, password_hash, api_key_hash, payout_address, created_at, updated_at)
         VALUES ($1, $2, 'x', $3, $4, '2026-12-01T10:00:00Z', now())`,
        [id, `${id}@example.com`, id.replace(/-/g, '').padEnd(64, '0'), payout],
      );

    expect(await migration.apply(sql)).toEqual({ applied: ['20261215000000_payout_address_spans'] });
    const spans = await sql.query<{ publisher_id: string; address: string; from_at: Date; until_at: Date | null }>(
      'SELECT publisher_id, address, from_at, until_at FROM payout_address_spans',
    );
    expect(
      spans.map((span) => [span.publisher_id, span.address, new Date(span.from_at).toISOString(), span.until_at]),
    ).toEqual([[named, '0xabcdef0000000000000000000000000000000001', '2026-12-01T10:00:00.000Z', null]]);
    const columns = await sql.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns WHERE table_name = 'publishers' AND column_name = 'payout_changed_at'`,
    );
    expect(columns).toEqual([]);
  });
});
