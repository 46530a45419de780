import { createTestDatabase } from '../../test/test-database';

/** Runs in the PostgreSQL run of the suites (DATABASE_URL set): PGlite has no network sessions. */
const onPostgres = process.env.DATABASE_URL ? it : it.skip;

describe('a PostgreSQL session of the API', () => {
  onPostgres(
    'asks the server to notice a lost client within a minute, so a dead instance’s job lock is freed',
    async () => {
      const test = await createTestDatabase();
      try {
        const settings = await test.database.sql.query<{ name: string; setting: string }>(
          `SELECT name, setting FROM pg_settings WHERE name IN ('tcp_keepalives_idle', 'tcp_keepalives_interval', 'tcp_keepalives_count') ORDER BY name`,
        );
        expect(settings).toEqual([
          { name: 'tcp_keepalives_count', setting: '3' },
          { name: 'tcp_keepalives_idle', setting: '30' },
          { name: 'tcp_keepalives_interval', setting: '10' },
        ]);
        // The schema a test isolates still applies beside them.
        const [{ schema }] = await test.database.sql.query<{ schema: string }>('SELECT current_schema() AS schema');
        expect(schema).toBe(test.database.schema);
      } finally {
        await test.dispose();
      }
    },
  );
});
