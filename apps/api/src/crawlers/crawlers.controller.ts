import type { SiteCrawlersView } from '@crawlgate/core';
import { Controller, Get, Param, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import { PublisherAuth } from '../auth/authenticated';
import { CurrentPublisher } from '../auth/request-context';
import type { Publisher } from '../generated/prisma/client';
import { ApiRangeQueries, parseDateRange } from '../reporting/date-range';
import { ApiSiteIdParam } from '../sites/site-id.param';
import { SitesService } from '../sites/sites.service';
import { SiteCrawlersViewDto } from './crawlers.dto';
import { crawlersCsv, CrawlersService } from './crawlers.service';

/** Who crawls a site, from the counts its middleware reports (POST /v1/site/gate-counts). */
@ApiTags('reporting')
@PublisherAuth()
@ApiSiteIdParam()
@ApiResponse({ status: 404, description: 'Site not found (or not yours)' })
@Controller('sites/:site_id')
export class CrawlersController {
  constructor(
    private readonly sites: SitesService,
    private readonly crawlers: CrawlersService,
  ) {}

  @Get('crawlers')
  @ApiOperation({
    summary:
      'Requests per crawler over whole UTC days: what the gate did with them, revenue, verified share, top paths',
  })
  @ApiRangeQueries()
  @ApiResponse({
    status: 200,
    type: SiteCrawlersViewDto,
    description: 'Every crawler the middleware reported in the range, and requests per day and action.',
  })
  async list(
    @CurrentPublisher() publisher: Publisher,
    @Param('site_id') siteId: string,
    @Query('from') from: unknown,
    @Query('to') to: unknown,
  ): Promise<SiteCrawlersView> {
    const site = await this.sites.owned(publisher, siteId);
    return this.crawlers.view(site.id, parseDateRange({ from, to }));
  }

  @Get('crawlers.csv')
  @ApiOperation({ summary: 'The crawlers table as CSV, one row per crawler' })
  @ApiRangeQueries()
  @ApiProduces('text/csv')
  @ApiResponse({
    status: 200,
    description:
      'CSV (RFC 4180): crawler, category, operator, requests, one column per action, revenue_usd, verified_share.',
    content: { 'text/csv': { schema: { type: 'string' } } },
  })
  async csv(
    @CurrentPublisher() publisher: Publisher,
    @Param('site_id') siteId: string,
    @Query('from') from: unknown,
    @Query('to') to: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    const site = await this.sites.owned(publisher, siteId);
    const csv = crawlersCsv(await this.crawlers.view(site.id, parseDateRange({ from, to }), { withPaths: false }));
    // Set only once the answer is CSV: an error stays JSON with its detail.
    void reply.headers({
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': 'attachment; filename="crawlers.csv"',
    });
    return csv;
  }
}
