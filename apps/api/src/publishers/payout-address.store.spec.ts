import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { PayoutAddressStore } from './payout-address.store';

const A = '0xAbCdEf0000000000000000000000000000000001';
const seconds = (iso: string) => BigInt(Date.parse(iso) / 1000);

/*
 * wasPayoutAt: whether an address was the publisher's payout address throughout a block's second.
 * A change within that second counts against it, its last half-millisecond too: now() is written
 * into a TIMESTAMPTZ(3) column rounded, so a change at t + 0.9996 s is stored as t + 1 (helper-350's F2).
 */
describe('PayoutAddressStore.wasPayoutAt', () => {
  let db: TestDatabase;
  let store: PayoutAddressStore;
  const publisher = '30000000-0000-4000-8000-0000000000bb';
  beforeAll(async () => {
    db = await createTestDatabase();
    store = new PayoutAddressStore(db.database);
    await db.database.sql.query(
      `INSERT INTO publishers (id, email, password_hash, api_key_hash, created_at, updated_at)
       VALUES ($1, 'r@example.com', 'x', $2, '2026-12-01T10:00:00Z', now())`,
      [publisher, 'd'.repeat(64)],
    );
  });
  afterAll(() => db?.dispose());

  it('is true inside a span and false after it, the second of its end included', async () => {
    await db.database.sql.query('DELETE FROM payout_address_spans');
    await db.database.sql.query(
      `INSERT INTO payout_address_spans (id, publisher_id, address, from_at, until_at)
       VALUES (gen_random_uuid(), $1::uuid, lower($2::text), '2026-12-01T10:00:00Z', '2026-12-10T12:00:00.400Z')`,
      [publisher, A],
    );
    expect(await store.wasPayoutAt(publisher, A, seconds('2026-12-10T11:59:59Z'))).toBe(true);
    expect(
      await store.wasPayoutAt(publisher, A.toUpperCase().replace('0X', '0x'), seconds('2026-12-10T11:59:59Z')),
    ).toBe(true);
    expect(await store.wasPayoutAt(publisher, A, seconds('2026-12-10T12:00:00Z'))).toBe(false);
    expect(await store.wasPayoutAt(publisher, A, seconds('2026-12-10T12:00:01Z'))).toBe(false);
    expect(await store.wasPayoutAt(publisher, A, seconds('2026-12-01T09:59:59Z'))).toBe(false);
  });

  it('counts a change in the last half-millisecond of the block’s second, stored rounded to the next second', async () => {
    await db.database.sql.query('DELETE FROM payout_address_spans');
    const t = seconds('2026-12-10T12:00:00Z');
    // What now() of a change at t + 0.9996 s becomes in the column.
    await db.database.sql.query(
      `INSERT INTO payout_address_spans (id, publisher_id, address, from_at, until_at)
       VALUES (gen_random_uuid(), $1::uuid, lower($2::text), '2026-12-01T10:00:00Z', to_timestamp($3::double precision))`,
      [publisher, A, (Number(t) + 0.9996).toString()],
    );
    expect(await store.wasPayoutAt(publisher, A, t)).toBe(false);
  });
});
