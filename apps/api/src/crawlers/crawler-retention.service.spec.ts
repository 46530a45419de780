import { createSite, registerPublisher, type TestSite } from '../../test/fixtures';
import { startTestApp, type TestApp } from '../../test/test-app';
import { CrawlerRetentionService } from './crawler-retention.service';

const DAY_MS = 86_400_000;
const NOW = new Date();
const dayBefore = (days: number) => new Date(NOW.getTime() - days * DAY_MS).toISOString().slice(0, 10);

describe('crawler analytics retention', () => {
  let app: TestApp;
  let sites: TestSite[];
  beforeAll(async () => {
    app = await startTestApp({ config: { crawlerAnalyticsRetentionDays: 30 } });
    const owner = await registerPublisher(app);
    sites = [await createSite(app, owner), await createSite(app, owner)];
  });
  afterAll(() => app.close());

  /** A count and a top path of `site` on `day`, as a report leaves them. */
  async function seed(site: TestSite, day: string): Promise<void> {
    await app.database.sql.query(
      `INSERT INTO crawler_daily_counts (site_id, day, crawler, action, verified, category, requests)
       VALUES ($1::uuid, $2::date, 'GPTBot', 'paid', false, 'ai-crawler', 3)`,
      [site.siteId, day],
    );
    await app.database.sql.query(
      `INSERT INTO crawler_daily_paths (site_id, day, crawler, path, requests) VALUES ($1::uuid, $2::date, 'GPTBot', '/a', 3)`,
      [site.siteId, day],
    );
  }
  const daysKept = async (table: string, site: TestSite) =>
    (
      await app.database.sql.query<{ day: string }>(
        `SELECT to_char(day, 'YYYY-MM-DD') AS day FROM ${table} WHERE site_id = $1::uuid ORDER BY day`,
        [site.siteId],
      )
    ).map((row) => row.day);

  it('deletes the counts and top paths of days older than the retention, every site, and keeps the rest', async () => {
    const days = [dayBefore(400), dayBefore(31), dayBefore(30), dayBefore(0)];
    for (const site of sites) for (const day of days) await seed(site, day);

    const deleted = await app.app.get(CrawlerRetentionService).runOnce(NOW);

    expect(deleted).toBe(2 * 2 * 2); // two days too old, a count and a path each, on two sites
    for (const site of sites) {
      expect(await daysKept('crawler_daily_counts', site)).toEqual([dayBefore(30), dayBefore(0)]);
      expect(await daysKept('crawler_daily_paths', site)).toEqual([dayBefore(30), dayBefore(0)]);
    }
    // Run again: nothing more to delete.
    expect(await app.app.get(CrawlerRetentionService).runOnce(NOW)).toBe(0);
  });

  it('keeps everything with a retention of 0', async () => {
    await seed(sites[0], dayBefore(1_000));
    const keepingAll = new CrawlerRetentionService(app.database, { ...app.config, crawlerAnalyticsRetentionDays: 0 });
    expect(await keepingAll.runOnce(NOW)).toBe(0);
    expect(await daysKept('crawler_daily_counts', sites[0])).toContain(dayBefore(1_000));
  });
});
