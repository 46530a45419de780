import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { PublisherAuth } from '../auth/authenticated';
import { CurrentPublisher } from '../auth/request-context';
import type { Publisher } from '../generated/prisma/client';
import { ApiSiteIdParam } from '../sites/site-id.param';
import { SitesService } from '../sites/sites.service';
import { MAX_RANGE_DAYS, parseDateRange } from './date-range';
import { ApiPageQueries, parsePageRequest } from './page-request';
import { SitePaymentPageView } from './payment-history.dto';
import { PaymentHistoryService } from './payment-history.service';
import { sitePaymentItem } from './payment-items';
import { SiteStatsView } from './site-stats.dto';
import { SiteStatsService } from './site-stats.service';

const DATE_QUERY = 'A date (YYYY-MM-DD) or an ISO 8601 date-time, taken as its UTC day.';

@ApiTags('reporting')
@PublisherAuth()
@ApiSiteIdParam()
@ApiResponse({ status: 404, description: 'Site not found (or not yours)' })
@Controller('sites/:site_id')
export class SiteReportsController {
  constructor(
    private readonly sites: SitesService,
    private readonly siteStats: SiteStatsService,
    private readonly history: PaymentHistoryService,
  ) {}

  @Get('stats')
  @ApiOperation({ summary: 'Revenue, gates and top paths and agents of a site over whole UTC days' })
  @ApiQuery({
    name: 'from',
    required: false,
    schema: { type: 'string' },
    description: `${DATE_QUERY} Default: 29 days before to.`,
  })
  @ApiQuery({
    name: 'to',
    required: false,
    schema: { type: 'string' },
    description: `${DATE_QUERY} Included. Default: today (UTC). At most ${MAX_RANGE_DAYS} days after from.`,
  })
  @ApiResponse({ status: 200, type: SiteStatsView, description: 'Revenue and gates of the site over whole UTC days.' })
  @ApiResponse({ status: 422, description: 'Bad from or to, to before from, or a range over 366 days.' })
  async stats(
    @CurrentPublisher() publisher: Publisher,
    @Param('site_id') siteId: string,
    @Query('from') from: unknown,
    @Query('to') to: unknown,
  ): Promise<SiteStatsView> {
    const site = await this.sites.owned(publisher, siteId);
    return this.siteStats.stats(site, parseDateRange({ from, to }));
  }

  @Get('payments')
  @ApiOperation({ summary: 'Confirmed payments to a site, newest first' })
  @ApiPageQueries()
  @ApiResponse({ status: 200, type: SitePaymentPageView, description: 'Confirmed payments to the site, newest first.' })
  async payments(
    @CurrentPublisher() publisher: Publisher,
    @Param('site_id') siteId: string,
    @Query('limit') limit: unknown,
    @Query('cursor') cursor: unknown,
  ): Promise<SitePaymentPageView> {
    const site = await this.sites.owned(publisher, siteId);
    return this.history.page({ siteId: site.id }, parsePageRequest({ limit, cursor }), sitePaymentItem);
  }
}
