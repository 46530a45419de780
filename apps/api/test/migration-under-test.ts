import type { SqlDriver } from '../src/db/sql-driver';
import { migrate, readMigrations } from '../src/db/migrator';
import { createTestDatabase, type TestDatabase } from './test-database';

/** The ids of the publisher and site `seedSite` writes. */
export const SEEDED = {
  publisher: '10000000-0000-4000-8000-000000000001',
  site: '20000000-0000-4000-8000-000000000002',
} as const;

/**
 * One migration's spec: `before()` is a database of the schema just before `name`, and `apply(sql)`
 * runs the migrations up to `name` itself (answering what was applied).
 */
export function migrationUnderTest(name: string): {
  before(): Promise<TestDatabase>;
  apply(sql: SqlDriver): ReturnType<typeof migrate>;
} {
  const all = readMigrations();
  const index = all.findIndex((migration) => migration.name === name);
  if (index <= 0) throw new Error(`${name} is not a migration after the first`);
  return {
    before: () => createTestDatabase({ migrations: all.slice(0, index) }),
    apply: (sql) => migrate(sql, all.slice(0, index + 1)),
  };
}

/** A publisher and its site (SEEDED), written with the columns every schema since the first has. */
export async function seedSite(sql: SqlDriver): Promise<void> {
  await sql.query(
    `INSERT INTO publishers (id, email, password_hash, api_key_hash, updated_at) VALUES ($1, 'p@example.com', 'x', $2, now())`,
    [SEEDED.publisher, 'a'.repeat(64)],
  );
  await sql.query(
    `INSERT INTO sites (id, publisher_id, domain, site_token_hash, updated_at) VALUES ($1, $2, 'example.com', $3, now())`,
    [SEEDED.site, SEEDED.publisher, 'b'.repeat(64)],
  );
}

/** A payment channel charged 10,000, written with the columns every schema since batch settlement has. */
export async function seedChannel(sql: SqlDriver): Promise<void> {
  const address = '0x' + '1'.repeat(40);
  await sql.query(
    `INSERT INTO payment_channels (channel_id, chain_id, escrow, payer, payer_authorizer, receiver, receiver_authorizer,
                                   token, withdraw_delay, salt, charged)
     VALUES ($1, 31337, $2, $2, $2, $2, $2, $2, 900, $3, 10000)`,
    ['0x' + '1'.repeat(64), address, '0x' + '0'.repeat(64)],
  );
}
