import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../config/config';
import type { Database } from '../db/database';
import { CONFIG, DATABASE } from '../db/tokens';
import { deleteCrawlerDaysBefore } from './crawler-counts.store';

const DAY_MS = 86_400_000;
/** Sites per statement: their ids go in one array parameter. */
const SITES_PER_STATEMENT = 500;

/**
 * Keeps crawler analytics to CRAWLER_ANALYTICS_RETENTION_DAYS: each site's counts and top paths
 * are bounded per day, not over time. Deleting twice deletes nothing more, so every instance may
 * run it.
 */
@Injectable()
export class CrawlerRetentionService {
  constructor(
    @Inject(DATABASE) private readonly db: Database,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  /** Deletes the days older than the retention, site by site in batches; the rows deleted. */
  async runOnce(now = new Date()): Promise<number> {
    const days = this.config.crawlerAnalyticsRetentionDays;
    if (days === 0) return 0;
    const oldestKept = new Date(now.getTime() - days * DAY_MS).toISOString().slice(0, 10);
    let deleted = 0;
    let after = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      const sites = await this.db.sql.query<{ id: string }>(
        'SELECT id FROM sites WHERE id > $1::uuid ORDER BY id LIMIT $2',
        [after, SITES_PER_STATEMENT],
      );
      if (sites.length === 0) return deleted;
      deleted += await deleteCrawlerDaysBefore(
        this.db.sql,
        sites.map((site) => site.id),
        oldestKept,
      );
      after = sites[sites.length - 1].id;
    }
  }
}
