import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { SqlDriver, SqlSession } from './sql-driver';

export interface Migration {
  name: string;
  sql: string;
  /** SHA-256 of migration.sql, as Prisma records it. */
  checksum: string;
}

/** Prisma Migrate's lock id, so our migrator and `prisma migrate deploy` never run at once. */
const PRISMA_ADVISORY_LOCK = 72707369;

const MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
);`;

/** Finds `prisma/migrations` above this file, whether it runs from src/ or from the dist bundle. */
export function findMigrationsDir(from = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'prisma', 'migrations');
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) throw new Error(`No prisma/migrations folder above ${from}`);
  }
}

export function readMigrations(dir = findMigrationsDir()): Migration[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(dir, entry.name, 'migration.sql')))
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

/**
 * Applies pending migrations, each in its own transaction together with its
 * `_prisma_migrations` row, so a failure leaves neither a half-applied schema nor a stray row.
 */
export async function migrate(driver: SqlDriver, migrations = readMigrations()): Promise<{ applied: string[] }> {
  return driver.session(async (session) => {
    await session.query('SELECT pg_advisory_lock($1)', [PRISMA_ADVISORY_LOCK]);
    try {
      return await applyPending(session, migrations);
    } finally {
      await session.query('SELECT pg_advisory_unlock($1)', [PRISMA_ADVISORY_LOCK]);
    }
  });
}

async function applyPending(session: SqlSession, migrations: Migration[]): Promise<{ applied: string[] }> {
  await session.exec(MIGRATIONS_TABLE);
  const rows = await session.query<AppliedRow>(
    'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL',
  );
  const done = new Map(rows.map((row) => [row.migration_name, row]));
  const applied: string[] = [];
  for (const migration of migrations) {
    const row = done.get(migration.name);
    if (row && row.finished_at === null) {
      throw new Error(
        `Migration ${migration.name} failed earlier and was never resolved; fix the database, then mark it rolled back`,
      );
    }
    if (row) {
      if (row.checksum !== migration.checksum) {
        throw new Error(`Migration ${migration.name} was changed after it was applied (checksum mismatch)`);
      }
      continue;
    }
    await applyOne(session, migration);
    applied.push(migration.name);
  }
  return { applied };
}

async function applyOne(session: SqlSession, migration: Migration): Promise<void> {
  await session.exec('BEGIN');
  try {
    await session.exec(migration.sql);
    await session.query(
      `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
       VALUES ($1, $2, $3, now(), now(), 1)`,
      [randomUUID(), migration.checksum, migration.name],
    );
    await session.exec('COMMIT');
  } catch (error) {
    await session.exec('ROLLBACK');
    throw new Error(`Migration ${migration.name} failed: ${(error as Error).message}`, { cause: error });
  }
}
