import { Body, Controller, HttpCode, Inject, Post } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { SiteTokenAuth } from '../auth/authenticated';
import { CurrentSite, type SiteWithPayout } from '../auth/request-context';
import type { Database } from '../db/database';
import { DATABASE } from '../db/tokens';
import { ValidationFailed, type ValidationItem } from '../http/validation-items';
import { MAX_PRICE_MICROS } from '@crawlgate/core';
import { addCrawlerCounts, addCrawlerPaths, foldCrawlersOverCap } from '../crawlers/crawler-counts.store';
import { canonicalCount, canonicalPathCrawler } from '../crawlers/reported-names';
import { addGateCounts } from './gate-counts.store';
import { CLOCK_AHEAD_MS, isReportableDay, REPORTABLE_DAYS } from './reportable-day';
import { GateCountsDto } from './gates.dto';

/**
 * The middleware's batched report, one call per interval: the gates (402s) it offered, for the
 * site's stats, and what it did per crawler, for its crawler analytics.
 */
@ApiTags('gates')
@Controller('site/gate-counts')
export class GateCountsController {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  @Post()
  @HttpCode(204)
  @SiteTokenAuth()
  @ApiOperation({ summary: 'Report the gates (402s) the middleware offered and its requests per crawler, per UTC day' })
  @ApiResponse({ status: 204, description: 'Added to the site’s daily gate counts and crawler analytics.' })
  async report(@CurrentSite() site: SiteWithPayout, @Body() body: GateCountsDto): Promise<void> {
    const lists = {
      counts: body.counts,
      crawlers: (body.crawlers ?? []).map(canonicalCount),
      paths: (body.paths ?? []).map(canonicalPathCrawler),
    };
    const problems: ValidationItem[] = Object.entries(lists).flatMap(([list, entries]) =>
      entries.flatMap(({ day }, index) =>
        isReportableDay(day)
          ? []
          : [
              {
                loc: ['body', list, index, 'day'],
                msg: `day must be today or one of the ${REPORTABLE_DAYS - 1} days before (UTC), or tomorrow in today's last ${CLOCK_AHEAD_MS / 60_000} minutes`,
                type: 'value_error',
                input: day,
              },
            ],
      ),
    );
    // No page costs more than MAX_PRICE_MICROS: revenue above that per request is no report of ours.
    lists.crawlers.forEach(({ action, requests, revenue_micros }, index) => {
      if (action !== 'paid' && revenue_micros !== '0')
        problems.push({
          loc: ['body', 'crawlers', index, 'revenue_micros'],
          msg: 'revenue_micros must be "0" unless action is "paid"',
          type: 'value_error',
          input: revenue_micros,
        });
      else if (BigInt(revenue_micros) > BigInt(requests) * MAX_PRICE_MICROS)
        problems.push({
          loc: ['body', 'crawlers', index, 'revenue_micros'],
          msg: `revenue_micros may be at most ${MAX_PRICE_MICROS} (the highest price) for each request counted`,
          type: 'value_error',
          input: revenue_micros,
        });
    });
    if (problems.length > 0) throw new ValidationFailed(problems);
    // One transaction: a report is stored whole or not at all.
    await this.db.sql.transaction(async (tx) => {
      await addGateCounts(tx, site.id, lists.counts);
      const capped = await foldCrawlersOverCap(tx, site.id, lists.crawlers, lists.paths);
      await addCrawlerCounts(tx, site.id, capped.counts);
      await addCrawlerPaths(tx, site.id, capped.paths);
    });
  }
}
