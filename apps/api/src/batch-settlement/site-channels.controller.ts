import type { SiteChannelsView } from '@crawlgate/core';
import { Controller, Get, Param } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { PublisherAuth } from '../auth/authenticated';
import { CurrentPublisher } from '../auth/request-context';
import type { Publisher } from '../generated/prisma/client';
import { ApiSiteIdParam } from '../sites/site-id.param';
import { SitesService } from '../sites/sites.service';
import { ChannelStore } from './channel.store';
import { SiteChannelsViewDto } from './site-channels.dto';
import { siteChannelsView } from './site-channels';

/** What a site's batch-settlement vouchers earned: claimed on chain, or still in the payers' channels. */
@ApiTags('reporting')
@PublisherAuth()
@ApiSiteIdParam()
@ApiResponse({ status: 404, description: 'Site not found (or not yours)' })
@Controller('sites/:site_id')
export class SiteChannelsController {
  constructor(
    private readonly sites: SitesService,
    private readonly channels: ChannelStore,
  ) {}

  @Get('channels')
  @ApiOperation({ summary: 'Voucher revenue of a site: claimed on chain, and still in the payers’ channels' })
  @ApiResponse({ status: 200, type: SiteChannelsViewDto })
  async view(@CurrentPublisher() publisher: Publisher, @Param('site_id') siteId: string): Promise<SiteChannelsView> {
    const site = await this.sites.owned(publisher, siteId);
    return siteChannelsView(site.id, await this.channels.siteChannels(site.id));
  }
}
