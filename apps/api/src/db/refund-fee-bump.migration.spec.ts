import { migrationUnderTest } from '../../test/migration-under-test';
import type { TestDatabase } from '../../test/test-database';

/*
 * 20261217000000_refund_fee_bump: a refund hold keeps every hash broadcast for its refund (a stuck
 * one is re-priced at its nonce) and when its current one was sent. Holds before it replaced
 * nothing; one signed already takes the time it was taken as its send time, so the sweep can judge it.
 */
describe('migration 20261217000000_refund_fee_bump', () => {
  const migration = migrationUnderTest('20261217000000_refund_fee_bump');
  let db: TestDatabase;
  beforeAll(async () => {
    db = await migration.before();
  });
  afterAll(() => db?.dispose());

  it('gives holds no replaced hashes, and a signed hold its hold time as its send time', async () => {
    const sql = db.database.sql;
    const channel = (n: number) => `0x${String(n).repeat(64)}`;
    const address = '0x' + '1'.repeat(40);
    const insert = (id: string, refund: { tx: string | null; lockedAt: string | null }) =>
      sql.query(
        `INSERT INTO payment_channels (channel_id, chain_id, escrow, payer, payer_authorizer, receiver, receiver_authorizer,
                                       token, withdraw_delay, salt, charged, refund_id, refund_nonce, refund_locked_at, refund_tx, refund_tx_nonce)
         VALUES ($1, 31337, $2, $2, $2, $2, $2, $2, 900, $3, 10000, $4::uuid, 0, $5::timestamptz, $6, $7)`,
        [
          id,
          address,
          '0x' + '0'.repeat(64),
          refund.lockedAt ? `50000000-0000-4000-8000-00000000000${id.slice(-1)}` : null,
          refund.lockedAt,
          refund.tx,
          refund.tx ? 3 : null,
        ],
      );
    const lockedAt = '2026-12-01T10:00:00.000Z';
    await insert(channel(1), { tx: '0x' + 'a'.repeat(64), lockedAt });
    await insert(channel(2), { tx: null, lockedAt });
    // Its refund landed: the hold ended, its last transaction kept.
    await insert(channel(3), { tx: '0x' + 'b'.repeat(64), lockedAt: null });

    expect(await migration.apply(sql)).toEqual({ applied: ['20261217000000_refund_fee_bump'] });
    const rows = await sql.query<{ channel_id: string; refund_replaced_txs: string[]; refund_tx_sent_at: Date | null }>(
      'SELECT channel_id, refund_replaced_txs, refund_tx_sent_at FROM payment_channels ORDER BY channel_id',
    );
    expect(
      rows.map((row) => [row.refund_replaced_txs, row.refund_tx_sent_at && new Date(row.refund_tx_sent_at)]),
    ).toEqual([
      [[], new Date(lockedAt)],
      [[], null],
      [[], null],
    ]);
  });
});
