import { migrationUnderTest, SEEDED, seedSite } from '../../test/migration-under-test';
import type { TestDatabase } from '../../test/test-database';

/*
 * 20261128000000_bot_policy adds one row per site for its bot policy. Applied to a database of the
 * schema before it, with a site in it: the site is untouched and has no policy (the defaults
 * apply), a second row for one site is refused, and deleting the site deletes its policy.
 */
describe('migration 20261128000000_bot_policy', () => {
  const migration = migrationUnderTest('20261128000000_bot_policy');
  let db: TestDatabase;
  beforeAll(async () => {
    db = await migration.before();
  });
  afterAll(() => db?.dispose());

  it('starts every site without a policy, keeps one per site, and goes with its site', async () => {
    const sql = db.database.sql;
    const { site } = SEEDED;
    await seedSite(sql);
    const sites = () => sql.query('SELECT * FROM sites');
    const before = await sites();

    expect(await migration.apply(sql)).toEqual({ applied: ['20261128000000_bot_policy'] });
    expect(await sites()).toEqual(before);
    expect(await sql.query('SELECT * FROM bot_policies')).toEqual([]);

    const insert = () =>
      sql.query(
        `INSERT INTO bot_policies (site_id, categories, bots, require_signature, version, updated_at) VALUES ($1, '{}', '{"GPTBot": "block"}', '{"categories": [], "bots": []}', 1, now())`,
        [site],
      );
    await insert();
    await expect(insert()).rejects.toThrow(/duplicate key|unique/i);
    expect(await sql.query('SELECT bots FROM bot_policies')).toEqual([{ bots: { GPTBot: 'block' } }]);

    await sql.query('DELETE FROM sites WHERE id = $1', [site]);
    expect(await sql.query('SELECT site_id FROM bot_policies')).toEqual([]);
  });
});
