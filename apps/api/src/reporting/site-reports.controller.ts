import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { PublisherAuth } from '../auth/authenticated';
import { CurrentPublisher } from '../auth/request-context';
import type { Publisher } from '../generated/prisma/client';
import { ApiSiteIdParam } from '../sites/site-id.param';
import { SitesService } from '../sites/sites.service';
import { ApiRangeQueries, parseDateRange } from './date-range';
import { ApiPageQueries, parsePageRequest } from './page-request';
import { SitePaymentPageView } from './payment-history.dto';
import { PaymentHistoryService } from './payment-history.service';
import { sitePaymentItem } from './payment-items';
import { SiteStatsView } from './site-stats.dto';
import { SiteStatsService } from './site-stats.service';

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
  @ApiRangeQueries()
  @ApiResponse({ status: 200, type: SiteStatsView, description: 'Revenue and gates of the site over whole UTC days.' })
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
