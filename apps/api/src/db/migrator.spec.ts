import { readPrismaSchema } from '../../test/prisma-schema';
import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { migrate, readMigrations } from './migrator';

describe('migrations', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.dispose());

  const columnsOf = (table: string) =>
    db.database.sql.query<{
      column_name: string;
      data_type: string;
      is_nullable: string;
      character_maximum_length: number | null;
    }>(
      `SELECT column_name, data_type, is_nullable, character_maximum_length
         FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`,
      [table],
    );

  it('create every table and column of schema.prisma with its type and nullability, and nothing else', async () => {
    const schema = readPrismaSchema();
    expect(schema.length).toBeGreaterThanOrEqual(4);
    for (const model of schema) {
      const actual = await columnsOf(model.table);
      const described = actual
        .map((c) => ({
          column: c.column_name,
          dataType: c.data_type,
          nullable: c.is_nullable === 'YES',
          ...(c.character_maximum_length ? { length: c.character_maximum_length } : {}),
        }))
        .sort((a, b) => a.column.localeCompare(b.column));
      expect({ table: model.table, columns: described }).toEqual({
        table: model.table,
        columns: [...model.columns].sort((a, b) => a.column.localeCompare(b.column)),
      });
    }
  });

  it('back every @id, @unique and @@unique with a unique index', async () => {
    const indexes = await db.database.sql.query<{ table: string; columns: string[] | string }>(
      `SELECT t.relname AS table, array_agg(a.attname ORDER BY a.attname) AS columns
         FROM pg_index i
         JOIN pg_class t ON t.oid = i.indrelid
         JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = current_schema()
         JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = ANY(i.indkey)
        WHERE i.indisunique
        GROUP BY i.indexrelid, t.relname`,
    );
    const have = new Set(indexes.map((row) => `${row.table}:${toArray(row.columns).sort().join(',')}`));
    for (const model of readPrismaSchema()) {
      for (const unique of model.uniques) expect(have).toContain(`${model.table}:${[...unique].sort().join(',')}`);
    }
  });

  it('create every @@index with its columns in order', async () => {
    const rows = await db.database.sql.query<{ table: string; columns: string[] | string }>(
      `SELECT t.relname AS table, array_agg(a.attname ORDER BY k.ord) AS columns
         FROM pg_index i
         JOIN pg_class t ON t.oid = i.indrelid
         JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = current_schema()
         CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
         JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
        WHERE NOT i.indisunique
        GROUP BY i.indexrelid, t.relname`,
    );
    const have = new Set(rows.map((row) => `${row.table}:${toArray(row.columns).join(',')}`));
    const wanted = readPrismaSchema().flatMap((model) =>
      model.indexes.map((columns) => `${model.table}:${columns.join(',')}`),
    );
    expect(wanted.length).toBeGreaterThan(0);
    for (const index of wanted) expect(have).toContain(index);
    expect(have.size).toBe(wanted.length);
  });

  it('record each migration in _prisma_migrations as Prisma does, and apply nothing twice', async () => {
    const migrations = readMigrations();
    const rows = await db.database.sql.query<{
      migration_name: string;
      checksum: string;
      finished_at: Date | null;
      applied_steps_count: number;
    }>(
      'SELECT migration_name, checksum, finished_at, applied_steps_count FROM "_prisma_migrations" ORDER BY migration_name',
    );
    expect(rows.map((row) => [row.migration_name, row.checksum, row.applied_steps_count])).toEqual(
      migrations.map((migration) => [migration.name, migration.checksum, 1]),
    );
    expect(rows.every((row) => row.finished_at !== null)).toBe(true);
    expect(await migrate(db.database.sql)).toEqual({ applied: [] });
  });

  it('refuse a migration whose file changed after it was applied', async () => {
    const [first, ...rest] = readMigrations();
    await expect(migrate(db.database.sql, [{ ...first, checksum: '0'.repeat(64) }, ...rest])).rejects.toThrow(
      /changed after it was applied/,
    );
  });

  it('roll back a failing migration entirely: no table, no row', async () => {
    const broken = {
      name: '29990101000000_broken',
      sql: 'CREATE TABLE "half_done" (id int); SELECT * FROM "no_such_table";',
      checksum: 'x'.repeat(64),
    };
    await expect(migrate(db.database.sql, [...readMigrations(), broken])).rejects.toThrow(
      /29990101000000_broken failed/,
    );
    const tables = await db.database.sql.query(
      `SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'half_done'`,
    );
    const rows = await db.database.sql.query(`SELECT 1 FROM "_prisma_migrations" WHERE migration_name = $1`, [
      broken.name,
    ]);
    expect([tables.length, rows.length]).toEqual([0, 0]);
  });
});

/** PGlite returns arrays; node-postgres may return name[] as a '{a,b}' string. */
function toArray(value: string[] | string): string[] {
  return Array.isArray(value) ? value : value.replace(/^\{|\}$/g, '').split(',');
}
