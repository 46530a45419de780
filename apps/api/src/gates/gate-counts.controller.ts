import { Body, Controller, HttpCode, Inject, Post } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { SiteTokenAuth } from '../auth/authenticated';
import { CurrentSite, type SiteWithPayout } from '../auth/request-context';
import type { Database } from '../db/database';
import { DATABASE } from '../db/tokens';
import { ValidationFailed } from '../http/validation-items';
import { addGateCounts } from './gate-counts.store';
import { GateCountsDto } from './gates.dto';

/** A report may name today and the two days before (a middleware's clock, a batch sent after midnight). */
const REPORTABLE_DAYS = 3;

/** The middleware's batched counts of the gates (402s) it offered, for the site's stats. */
@ApiTags('gates')
@Controller('site/gate-counts')
export class GateCountsController {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  @Post()
  @HttpCode(204)
  @SiteTokenAuth()
  @ApiOperation({ summary: 'Report the gates (402s) the middleware offered, per UTC day' })
  @ApiResponse({ status: 204, description: 'Added to the site’s daily gate counts.' })
  async report(@CurrentSite() site: SiteWithPayout, @Body() body: GateCountsDto): Promise<void> {
    const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
    body.counts.forEach(({ day }, index) => {
      const at = Date.parse(`${day}T00:00:00Z`);
      const real = !Number.isNaN(at) && new Date(at).toISOString().slice(0, 10) === day;
      if (!real || !(at <= today && at > today - REPORTABLE_DAYS * 86_400_000)) {
        throw new ValidationFailed([{ loc: ['body', 'counts', index, 'day'], msg: `day must be today or one of the ${REPORTABLE_DAYS - 1} days before (UTC)`, type: 'value_error', input: day }]);
      }
    });
    await addGateCounts(this.db.sql, site.id, body.counts);
  }
}
