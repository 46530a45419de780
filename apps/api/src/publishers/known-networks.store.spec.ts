import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { KnownNetworksStore } from './known-networks.store';

describe('KnownNetworksStore', () => {
  let db: TestDatabase;
  let store: KnownNetworksStore;
  /** The password the logins below checked, still the publisher's. */
  let current: { publisherId: string; passwordHash: string };
  beforeAll(async () => {
    db = await createTestDatabase();
    store = new KnownNetworksStore(db.database);
    const publisher = await db.database.prisma.publisher.create({
      data: { email: 'known@example.com', passwordHash: 'scrypt-of-the-password', apiKeyHash: 'a'.repeat(64) },
    });
    current = { publisherId: publisher.id, passwordHash: publisher.passwordHash };
  });
  afterAll(() => db.dispose());

  const rows = async () =>
    db.database.sql.query<{ key_hash: string; account_hash: string; expires_at: Date }>(
      'SELECT key_hash, account_hash, expires_at FROM known_login_networks ORDER BY key_hash',
    );

  it('knows a network for its account only, for 30 days, and stores no key in the clear', async () => {
    expect(await store.isKnown('login-a', '203.0.113')).toBe(false);
    await store.remember(db.database.prisma, 'login-a', '203.0.113', current);
    await store.remember(db.database.prisma, 'login-a', '203.0.113', current); // again: one row, its time renewed
    expect(await store.isKnown('login-a', '203.0.113')).toBe(true);
    expect(await store.isKnown('login-a', '198.51.100')).toBe(false);
    expect(await store.isKnown('login-b', '203.0.113')).toBe(false);
    const [row, ...others] = await rows();
    expect(others).toHaveLength(0);
    expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.account_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toMatch(/login-a|203\.0\.113/);
    const days = (new Date(row.expires_at).getTime() - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThanOrEqual(30);
  });

  it('remembers nothing for a password that is no longer the publisher’s (a login racing a password change)', async () => {
    await store.remember(db.database.prisma, 'login-g', '192.0.2', {
      ...current,
      passwordHash: 'scrypt-of-the-old-password',
    });
    expect(await store.isKnown('login-g', '192.0.2')).toBe(false);
  });

  it('forgets every network of one account, and no other’s', async () => {
    await store.remember(db.database.prisma, 'login-c', '192.0.2', current);
    await store.remember(db.database.prisma, 'login-c', 'fd00:1:2', current);
    await store.remember(db.database.prisma, 'login-d', '192.0.2', current);
    await store.forget(db.database.prisma, 'login-c');
    expect(await store.isKnown('login-c', '192.0.2')).toBe(false);
    expect(await store.isKnown('login-c', 'fd00:1:2')).toBe(false);
    expect(await store.isKnown('login-d', '192.0.2')).toBe(true);
  });

  it('takes an expired network as unknown, and deletes it', async () => {
    await store.remember(db.database.prisma, 'login-e', '192.0.2', current);
    await store.remember(db.database.prisma, 'login-f', '192.0.2', current);
    await db.database.sql.query(
      `UPDATE known_login_networks SET expires_at = now() - interval '1 second'
        WHERE account_hash = encode(sha256('login-e'::bytea), 'hex')`,
    );
    expect(await store.isKnown('login-e', '192.0.2')).toBe(false);
    expect(await store.deleteExpired()).toBe(1);
    expect(await store.isKnown('login-f', '192.0.2')).toBe(true);
  });
});
