import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiResponse, ApiTags } from '@nestjs/swagger';
import { PublisherAuthGuard } from '../auth/guards';
import { CurrentPublisher } from '../auth/request-context';
import type { Publisher } from '../generated/prisma/client';
import { NoStore } from '../http/no-store';
import { CreatedSiteView, CreateSiteDto, DeletedSiteView, RotateSecretDto, SecretRotationView, SiteListView, SiteTokenView, SiteView, UpdateSiteDto } from './sites.dto';
import { SitesService } from './sites.service';

@ApiTags('sites')
@ApiBearerAuth()
@UseGuards(PublisherAuthGuard)
@Controller('sites')
export class SitesController {
  constructor(private readonly sites: SitesService) {}

  @Post()
  @NoStore()
  @ApiResponse({ status: 201, type: CreatedSiteView, description: 'site_token and access_token_secret are shown only here.' })
  @ApiResponse({ status: 409, description: 'You already have a site with this domain' })
  create(@CurrentPublisher() publisher: Publisher, @Body() body: CreateSiteDto): Promise<CreatedSiteView> {
    return this.sites.create(publisher, body);
  }

  @Get()
  @ApiResponse({ status: 200, type: SiteListView })
  async list(@CurrentPublisher() publisher: Publisher): Promise<SiteListView> {
    return { items: await this.sites.list(publisher) };
  }

  @Get(':site_id')
  @ApiResponse({ status: 200, type: SiteView })
  get(@CurrentPublisher() publisher: Publisher, @Param('site_id') siteId: string): Promise<SiteView> {
    return this.sites.get(publisher, siteId);
  }

  @Patch(':site_id')
  @ApiResponse({ status: 200, type: SiteView })
  update(@CurrentPublisher() publisher: Publisher, @Param('site_id') siteId: string, @Body() body: UpdateSiteDto): Promise<SiteView> {
    return this.sites.update(publisher, siteId, body);
  }

  @Delete(':site_id')
  @ApiResponse({ status: 200, type: DeletedSiteView })
  remove(@CurrentPublisher() publisher: Publisher, @Param('site_id') siteId: string): Promise<DeletedSiteView> {
    return this.sites.remove(publisher, siteId);
  }

  @Post(':site_id/site-token/rotate')
  @NoStore()
  @HttpCode(200)
  @ApiResponse({ status: 200, type: SiteTokenView })
  rotateSiteToken(@CurrentPublisher() publisher: Publisher, @Param('site_id') siteId: string): Promise<SiteTokenView> {
    return this.sites.rotateSiteToken(publisher, siteId);
  }

  @Post(':site_id/secret/rotate')
  @NoStore()
  @HttpCode(200)
  @ApiBody({ type: RotateSecretDto, required: false })
  @ApiResponse({ status: 200, type: SecretRotationView })
  rotateSecret(@CurrentPublisher() publisher: Publisher, @Param('site_id') siteId: string, @Body() body: RotateSecretDto): Promise<SecretRotationView> {
    return this.sites.rotateSecret(publisher, siteId, body.grace_seconds);
  }
}
