import { sha256Hex } from '@crawlgate/core';
import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { PasswordAttemptsStore } from './password-attempts.store';

describe('PasswordAttemptsStore', () => {
  let db: TestDatabase;
  let store: PasswordAttemptsStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    store = new PasswordAttemptsStore(db.database);
  });
  afterAll(() => db.dispose());

  const spendMany = (key: string, times: number, budget = { limit: 3, ttl: 60_000 }) =>
    Promise.all(Array.from({ length: times }, () => store.spend(key, budget)));

  it('lets `limit` attempts through, then blocks for ttl, counting attempts sent at once exactly', async () => {
    const counts = await spendMany('at-once', 12);
    expect(counts.filter((count) => !count.blocked)).toHaveLength(3);
    const blocked = await store.spend('at-once', { limit: 3, ttl: 60_000 });
    expect(blocked).toEqual({ blocked: true, retryAfterSeconds: 60 });
    expect(await store.spend('another key', { limit: 3, ttl: 60_000 })).toEqual({ blocked: false });
    // check() reads without counting.
    expect(await store.check('at-once')).toEqual({ blocked: true, retryAfterSeconds: 60 });
    expect(await store.check('another key')).toEqual({ blocked: false });
    expect(await store.check('never seen')).toEqual({ blocked: false });
    for (let i = 0; i < 5; i++) await store.check('another key');
    expect((await spendMany('another key', 2)).every((count) => !count.blocked)).toBe(true); // still 3 in all
  });

  it('starts a new window once the last is over, and keeps a block that outlasts its window until its end', async () => {
    // Margins of 800 ms around each boundary, for a loaded machine.
    const budget = { limit: 2, ttl: 2000 };
    const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    expect((await store.spend('window', budget)).blocked).toBe(false); // the window opens
    await wait(1200);
    expect((await store.spend('window', budget)).blocked).toBe(false);
    expect((await store.spend('window', budget)).blocked).toBe(true); // the third: blocked for 2 s from now
    await wait(1200);
    expect((await store.spend('window', budget)).blocked).toBe(true); // the window is over, the block is not
    await wait(1200);
    expect((await spendMany('window', 2, budget)).every((count) => !count.blocked)).toBe(true); // a new window
  });

  it('forgets one counter and its block, and no other', async () => {
    await spendMany('forgotten', 5);
    await spendMany('kept', 5);
    await store.forget('forgotten');
    expect(await store.check('forgotten')).toEqual({ blocked: false });
    expect(await store.check('kept')).toMatchObject({ blocked: true });
    expect((await spendMany('forgotten', 3)).every((count) => !count.blocked)).toBe(true);
  });

  it('deletes only the counters whose window and block are both over', async () => {
    await store.spend('short', { limit: 5, ttl: 100 });
    await spendMany('blocked', 3, { limit: 1, ttl: 60_000 });
    await store.spend('long', { limit: 5, ttl: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 150));
    const stored = async (key: string) =>
      (await db.database.sql.query('SELECT 1 FROM password_attempts WHERE key_hash = $1', [sha256Hex(key)])).length;
    expect(await store.deleteOver()).toBeGreaterThanOrEqual(1);
    expect([await stored('short'), await stored('blocked'), await stored('long')]).toEqual([0, 1, 1]);
    expect((await store.spend('blocked', { limit: 1, ttl: 60_000 })).blocked).toBe(true);
    expect((await store.spend('short', { limit: 1, ttl: 60_000 })).blocked).toBe(false); // counted anew
  });
});
