import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { PublisherAuth } from '../auth/authenticated';
import { CurrentPublisher } from '../auth/request-context';
import type { Publisher } from '../generated/prisma/client';
import { NoStore } from '../http/no-store';
import {
  CreatedSiteView,
  CreateSiteDto,
  DeletedSiteView,
  RotateSecretDto,
  SecretRotationView,
  SiteListView,
  SiteTokenView,
  SiteView,
  UpdateSiteDto,
} from './sites.dto';
import { ApiSiteIdParam } from './site-id.param';
import { SitesService } from './sites.service';

const SITE_NOT_FOUND = { status: 404, description: 'Site not found (or not yours)' };
const DOMAIN_TAKEN = { status: 409, description: 'You already have a site with this domain' };

@ApiTags('sites')
@PublisherAuth()
@Controller('sites')
export class SitesController {
  constructor(private readonly sites: SitesService) {}

  @Post()
  @NoStore()
  @ApiOperation({ summary: 'Register a site' })
  @ApiResponse({
    status: 201,
    type: CreatedSiteView,
    description: 'site_token and access_token_secret are shown only here.',
  })
  @ApiResponse({
    status: 409,
    description:
      'You already have a site with this domain, or as many sites as one account holds (MAX_SITES_PER_PUBLISHER)',
  })
  create(@CurrentPublisher() publisher: Publisher, @Body() body: CreateSiteDto): Promise<CreatedSiteView> {
    return this.sites.create(publisher, body);
  }

  @Get()
  @ApiOperation({ summary: 'List your sites' })
  @ApiResponse({ status: 200, type: SiteListView })
  async list(@CurrentPublisher() publisher: Publisher): Promise<SiteListView> {
    return { items: await this.sites.list(publisher) };
  }

  @Get(':site_id')
  @ApiOperation({ summary: 'Get a site' })
  @ApiSiteIdParam()
  @ApiResponse({ status: 200, type: SiteView })
  @ApiResponse(SITE_NOT_FOUND)
  get(@CurrentPublisher() publisher: Publisher, @Param('site_id') siteId: string): Promise<SiteView> {
    return this.sites.get(publisher, siteId);
  }

  @Patch(':site_id')
  @ApiOperation({ summary: 'Change a site’s domain or name' })
  @ApiSiteIdParam()
  @ApiResponse({ status: 200, type: SiteView })
  @ApiResponse(SITE_NOT_FOUND)
  @ApiResponse(DOMAIN_TAKEN)
  update(
    @CurrentPublisher() publisher: Publisher,
    @Param('site_id') siteId: string,
    @Body() body: UpdateSiteDto,
  ): Promise<SiteView> {
    return this.sites.update(publisher, siteId, body);
  }

  @Delete(':site_id')
  @ApiOperation({ summary: 'Delete a site, its pricing, tokens and secrets' })
  @ApiSiteIdParam()
  @ApiResponse({ status: 200, type: DeletedSiteView })
  @ApiResponse(SITE_NOT_FOUND)
  remove(@CurrentPublisher() publisher: Publisher, @Param('site_id') siteId: string): Promise<DeletedSiteView> {
    return this.sites.remove(publisher, siteId);
  }

  @Post(':site_id/site-token/rotate')
  @NoStore()
  @HttpCode(200)
  @ApiOperation({ summary: 'Rotate the site token' })
  @ApiSiteIdParam()
  @ApiResponse({ status: 200, type: SiteTokenView })
  @ApiResponse(SITE_NOT_FOUND)
  rotateSiteToken(@CurrentPublisher() publisher: Publisher, @Param('site_id') siteId: string): Promise<SiteTokenView> {
    return this.sites.rotateSiteToken(publisher, siteId);
  }

  @Post(':site_id/secret/rotate')
  @NoStore()
  @HttpCode(200)
  @ApiOperation({ summary: 'Rotate the access-token secret' })
  @ApiSiteIdParam()
  @ApiBody({ type: RotateSecretDto, required: false })
  @ApiResponse({ status: 200, type: SecretRotationView })
  @ApiResponse(SITE_NOT_FOUND)
  rotateSecret(
    @CurrentPublisher() publisher: Publisher,
    @Param('site_id') siteId: string,
    @Body() body: RotateSecretDto,
  ): Promise<SecretRotationView> {
    return this.sites.rotateSecret(publisher, siteId, body.grace_seconds);
  }
}
