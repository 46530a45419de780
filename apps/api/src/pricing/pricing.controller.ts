import { Body, Controller, Get, Param, Put, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { PublisherAuthGuard } from '../auth/guards';
import { CurrentPublisher } from '../auth/request-context';
import type { Publisher } from '../generated/prisma/client';
import { ValidationFailed } from '../http/validation-items';
import { SitesService } from '../sites/sites.service';
import { PriceResolutionView, PricingAppliedView, PricingDto, PricingView } from './pricing.dto';
import { PricingService } from './pricing.service';

@ApiTags('pricing')
@ApiBearerAuth()
@UseGuards(PublisherAuthGuard)
@Controller('sites/:site_id/pricing')
export class PricingController {
  constructor(
    private readonly sites: SitesService,
    private readonly pricing: PricingService,
  ) {}

  @Put()
  @ApiResponse({ status: 200, type: PricingAppliedView, description: 'Replaces every rule of the site.' })
  @ApiResponse({ status: 422, description: 'Validation error: `detail` is a list of {loc, msg, type, input?, ctx?}' })
  async replace(@CurrentPublisher() publisher: Publisher, @Param('site_id') siteId: string, @Body() body: PricingDto): Promise<PricingAppliedView> {
    return this.pricing.replace(await this.sites.owned(publisher, siteId), body);
  }

  @Get()
  @ApiResponse({ status: 200, type: PricingView })
  async view(@CurrentPublisher() publisher: Publisher, @Param('site_id') siteId: string): Promise<PricingView> {
    return this.pricing.view(await this.sites.owned(publisher, siteId));
  }

  @Get('resolve')
  @ApiQuery({ name: 'path', description: 'A path or URL to price, e.g. /blog/post-1?ref=x' })
  @ApiResponse({ status: 200, type: PriceResolutionView, description: 'Which rule wins for a path, and its price.' })
  async resolve(@CurrentPublisher() publisher: Publisher, @Param('site_id') siteId: string, @Query('path') path: unknown): Promise<PriceResolutionView> {
    const site = await this.sites.owned(publisher, siteId);
    if (typeof path !== 'string' || path.length === 0 || path.length > 2048) {
      throw new ValidationFailed([{ loc: ['query', 'path'], msg: 'path is required: a path or URL of at most 2048 characters', type: 'missing', input: path }]);
    }
    return this.pricing.resolve(site, path);
  }
}
