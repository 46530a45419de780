import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { Database } from '../db/database';
import { DATABASE } from '../db/tokens';
import { addGateCounts } from './gate-counts.store';

/** How often the gates POST /v1/gates offered are written to the daily counts. */
const FLUSH_INTERVAL_MS = 10_000;
const DAY_MS = 86_400_000;

/**
 * Counts the gates this instance offers (POST /v1/gates) in memory and writes them in batches, so a
 * gate request writes nothing. Flushed on an interval and at shutdown; counts of a crash are lost,
 * never money (a gate is a signed offer, the payment row is the truth).
 */
@Injectable()
export class GateCounterService implements OnApplicationShutdown {
  private readonly logger = new Logger('GateCounter');
  private counts = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private day = { number: NaN, text: '' };

  constructor(@Inject(DATABASE) private readonly db: Database) {}

  count(siteId: string, now = Date.now()): void {
    const key = `${siteId} ${this.dayOf(now)}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    this.timer ??= setInterval(() => void this.flush(), FLUSH_INTERVAL_MS).unref();
  }

  /** The UTC day (YYYY-MM-DD) of a time in ms, formatted once a day rather than once a gate. */
  private dayOf(ms: number): string {
    const day = Math.floor(ms / DAY_MS);
    if (day !== this.day.number) this.day = { number: day, text: new Date(day * DAY_MS).toISOString().slice(0, 10) };
    return this.day.text;
  }

  async flush(): Promise<void> {
    if (this.counts.size === 0) return;
    const batch = this.counts;
    this.counts = new Map();
    const bySite = new Map<string, { day: string; gates: number }[]>();
    for (const [key, gates] of batch) {
      const [siteId, day] = key.split(' ');
      bySite.set(siteId, [...(bySite.get(siteId) ?? []), { day, gates }]);
    }
    for (const [siteId, counts] of bySite) {
      // A deleted site's counts have nowhere to go (foreign key): dropped like any lost batch.
      await addGateCounts(this.db.sql, siteId, counts).catch((error: Error) =>
        this.logger.warn(`Gate counts of site ${siteId} lost: ${error.message}`),
      );
    }
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }
}
