import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { migrate, readMigrations } from '../db/migrator';

/*
 * 20261128000000_bot_policy adds one row per site for its bot policy. Applied to a database of the
 * schema before it, with a site in it: the site is untouched and has no policy (the defaults
 * apply), a second row for one site is refused, and deleting the site deletes its policy.
 */
describe('migration 20261128000000_bot_policy', () => {
  const all = readMigrations();
  const index = all.findIndex((migration) => migration.name === '20261128000000_bot_policy');
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ migrations: all.slice(0, index) });
  });
  afterAll(() => db?.dispose());

  it('starts every site without a policy, keeps one per site, and goes with its site', async () => {
    expect(index).toBeGreaterThan(0);
    const sql = db.database.sql;
    const publisher = '10000000-0000-4000-8000-000000000001';
    const site = '20000000-0000-4000-8000-000000000002';
    await sql.query(`INSERT INTO publishers (id, email, password_hash, api_key_hash, updated_at) VALUES ($1, 'p@example.com', 'x', $2, now())`, [publisher, 'a'.repeat(64)]);
    await sql.query(`INSERT INTO sites (id, publisher_id, domain, site_token_hash, updated_at) VALUES ($1, $2, 'example.com', $3, now())`, [site, publisher, 'b'.repeat(64)]);
    const sites = () => sql.query('SELECT * FROM sites');
    const before = await sites();

    expect(await migrate(sql, all.slice(0, index + 1))).toEqual({ applied: ['20261128000000_bot_policy'] });
    expect(await sites()).toEqual(before);
    expect(await sql.query('SELECT * FROM bot_policies')).toEqual([]);

    const insert = () =>
      sql.query(`INSERT INTO bot_policies (site_id, categories, bots, require_signature, version, updated_at) VALUES ($1, '{}', '{"GPTBot": "block"}', '{"categories": [], "bots": []}', 1, now())`, [site]);
    await insert();
    await expect(insert()).rejects.toThrow(/duplicate key|unique/i);
    expect(await sql.query('SELECT bots FROM bot_policies')).toEqual([{ bots: { GPTBot: 'block' } }]);

    await sql.query('DELETE FROM sites WHERE id = $1', [site]);
    expect(await sql.query('SELECT site_id FROM bot_policies')).toEqual([]);
  });
});
