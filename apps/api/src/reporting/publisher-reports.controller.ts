import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { PublisherAuth } from '../auth/authenticated';
import { CurrentPublisher } from '../auth/request-context';
import type { Publisher } from '../generated/prisma/client';
import { ApiRangeQueries, parseDateRange } from './date-range';
import { PublisherStatsView } from './site-stats.dto';
import { SiteStatsService } from './site-stats.service';

/** Reports over every site of the caller at once. */
@ApiTags('reporting')
@PublisherAuth()
@Controller('publishers/me')
export class PublisherReportsController {
  constructor(private readonly siteStats: SiteStatsService) {}

  @Get('stats')
  @ApiOperation({ summary: 'Revenue, gates and top paths and agents over all your sites, over whole UTC days' })
  @ApiRangeQueries()
  @ApiResponse({
    status: 200,
    type: PublisherStatsView,
    description: 'Counted over every site at once: top lists and distinct agents are exact, not per site added up.',
  })
  stats(
    @CurrentPublisher() publisher: Publisher,
    @Query('from') from: unknown,
    @Query('to') to: unknown,
  ): Promise<PublisherStatsView> {
    return this.siteStats.publisherStats(publisher.id, parseDateRange({ from, to }));
  }
}
