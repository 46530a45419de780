import type { SiteBotPolicy } from '@crawlgate/core';
import { Body, Controller, Delete, Get, Param, Put } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { PublisherAuth } from '../auth/authenticated';
import { CurrentPublisher } from '../auth/request-context';
import type { Publisher } from '../generated/prisma/client';
import { ApiSiteIdParam } from '../sites/site-id.param';
import { SitesService } from '../sites/sites.service';
import { BotActionDto, BotPolicyDto, SiteBotPolicyView } from './bot-policy.dto';
import { BotPolicyService } from './bot-policy.service';

const INVALID = 'Validation error: `detail` is a list of {loc, msg, type, input?, ctx?}';

/** Which crawlers a site's middleware allows, charges or blocks: stored here, pulled by the middleware with the pricing. */
@ApiTags('bot policy')
@PublisherAuth()
@ApiSiteIdParam()
@ApiResponse({ status: 404, description: 'Site not found (or not yours)' })
@Controller('sites/:site_id/bot-policy')
export class BotPolicyController {
  constructor(
    private readonly sites: SitesService,
    private readonly policies: BotPolicyService,
  ) {}

  @Get()
  @ApiOperation({ summary: 'Get the site’s bot policy, with the middleware’s defaults' })
  @ApiResponse({ status: 200, type: SiteBotPolicyView })
  async view(@CurrentPublisher() publisher: Publisher, @Param('site_id') siteId: string): Promise<SiteBotPolicy> {
    return this.policies.view((await this.sites.owned(publisher, siteId)).id);
  }

  @Put()
  @ApiOperation({
    summary: 'Replace the site’s bot policy: actions per category and per crawler, and the crawlers that must sign',
  })
  @ApiResponse({
    status: 200,
    type: SiteBotPolicyView,
    description: 'The policy as stored. What the body leaves out is cleared.',
  })
  @ApiResponse({
    status: 422,
    description: `${INVALID}. An unknown category, action or crawler name, or too many entries.`,
  })
  async replace(
    @CurrentPublisher() publisher: Publisher,
    @Param('site_id') siteId: string,
    @Body() body: BotPolicyDto,
  ): Promise<SiteBotPolicy> {
    return this.policies.replace((await this.sites.owned(publisher, siteId)).id, body);
  }

  @Put('bots/:name')
  @ApiOperation({ summary: 'Set one crawler’s action, keeping the rest of the policy' })
  @ApiParam({
    name: 'name',
    schema: { type: 'string' },
    description: 'The crawler’s name in the catalogue (any case), e.g. GPTBot',
  })
  @ApiResponse({ status: 200, type: SiteBotPolicyView, description: 'The whole policy after the change.' })
  @ApiResponse({ status: 422, description: `${INVALID}. An unknown crawler name or action.` })
  async setBot(
    @CurrentPublisher() publisher: Publisher,
    @Param('site_id') siteId: string,
    @Param('name') name: string,
    @Body() body: BotActionDto,
  ): Promise<SiteBotPolicy> {
    return this.policies.setBot((await this.sites.owned(publisher, siteId)).id, name, body.action);
  }

  @Delete('bots/:name')
  @ApiOperation({ summary: 'Remove one crawler’s action: its category’s (or the default) applies again' })
  @ApiParam({
    name: 'name',
    schema: { type: 'string' },
    description: 'The crawler’s name in the catalogue (any case), e.g. GPTBot',
  })
  @ApiResponse({
    status: 200,
    type: SiteBotPolicyView,
    description: 'The whole policy after the change (unchanged if the crawler had no action of its own).',
  })
  @ApiResponse({ status: 422, description: `${INVALID}. An unknown crawler name.` })
  async removeBot(
    @CurrentPublisher() publisher: Publisher,
    @Param('site_id') siteId: string,
    @Param('name') name: string,
  ): Promise<SiteBotPolicy> {
    return this.policies.removeBot((await this.sites.owned(publisher, siteId)).id, name);
  }
}
