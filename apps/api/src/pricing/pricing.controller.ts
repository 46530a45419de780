import { MAX_URL_LENGTH } from '@crawlgate/core';
import { Body, Controller, Get, Param, Put, Query } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { PublisherAuth } from '../auth/authenticated';
import { CurrentPublisher } from '../auth/request-context';
import type { Publisher } from '../generated/prisma/client';
import { ValidationFailed } from '../http/validation-items';
import { ApiSiteIdParam } from '../sites/site-id.param';
import { SitesService } from '../sites/sites.service';
import { PriceResolutionView, PricingAppliedView, PricingDto, PricingView } from './pricing.dto';
import { PricingService } from './pricing.service';

@ApiTags('pricing')
@PublisherAuth()
@ApiSiteIdParam()
@ApiResponse({ status: 404, description: 'Site not found (or not yours)' })
@Controller('sites/:site_id/pricing')
export class PricingController {
  constructor(
    private readonly sites: SitesService,
    private readonly pricing: PricingService,
  ) {}

  @Put()
  @ApiOperation({ summary: 'Replace the site’s pricing: default price and ordered rules' })
  @ApiResponse({ status: 200, type: PricingAppliedView, description: 'Replaces every rule of the site.' })
  @ApiResponse({ status: 422, description: 'Validation error: `detail` is a list of {loc, msg, type, input?, ctx?}' })
  async replace(
    @CurrentPublisher() publisher: Publisher,
    @Param('site_id') siteId: string,
    @Body() body: PricingDto,
  ): Promise<PricingAppliedView> {
    return this.pricing.replace(await this.sites.owned(publisher, siteId), body);
  }

  @Get()
  @ApiOperation({ summary: 'Get the site’s pricing' })
  @ApiResponse({ status: 200, type: PricingView })
  async view(@CurrentPublisher() publisher: Publisher, @Param('site_id') siteId: string): Promise<PricingView> {
    return this.pricing.view(await this.sites.owned(publisher, siteId));
  }

  @Get('resolve')
  @ApiOperation({ summary: 'Which rule prices a path, and at what price' })
  @ApiQuery({
    name: 'path',
    required: true,
    schema: { type: 'string', minLength: 1, maxLength: MAX_URL_LENGTH },
    description: 'A path or URL to price, e.g. /blog/post-1?ref=x',
  })
  @ApiResponse({ status: 200, type: PriceResolutionView, description: 'Which rule wins for a path, and its price.' })
  @ApiResponse({
    status: 422,
    description:
      'No path, or one too costly to price against the site’s rules (more than pricing one request may take; the gate charges it the site’s highest price)',
  })
  async resolve(
    @CurrentPublisher() publisher: Publisher,
    @Param('site_id') siteId: string,
    @Query('path') path: unknown,
  ): Promise<PriceResolutionView> {
    const site = await this.sites.owned(publisher, siteId);
    if (typeof path !== 'string' || path.length === 0 || path.length > MAX_URL_LENGTH) {
      throw new ValidationFailed([
        {
          loc: ['query', 'path'],
          msg: `path is required: a path or URL of at most ${MAX_URL_LENGTH} characters`,
          type: 'missing',
          input: path,
        },
      ]);
    }
    return this.pricing.resolve(site, path);
  }
}
