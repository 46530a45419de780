import { Body, Controller, Get, Inject, Param, Post, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SiteTokenAuth } from '../auth/authenticated';
import { CurrentSite, type SiteWithPayout } from '../auth/request-context';
import { NoStore } from '../http/no-store';
import type { AppConfig } from '../config/config';
import { CONFIG } from '../db/tokens';
import { LimitPerSiteToken } from '../rate-limit/limits';
import type { GateOffer } from '@crawlgate/core';
import { CreateGateDto, FreePathView, GateOfferView, GateView } from './gates.dto';
import { GatesService } from './gates.service';
import { requestBaseUrl } from '../http/request-base-url';

@ApiTags('gates')
@Controller('gates')
export class GatesController {
  constructor(
    private readonly gates: GatesService,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  @Post()
  @SiteTokenAuth()
  @LimitPerSiteToken(200)
  @ApiOperation({ summary: 'Open a gate for a URL of the site: its price and how to pay' })
  @ApiResponse({
    status: 402,
    type: GateOfferView,
    description:
      'Priced path: a gate (a signed offer; nothing is stored), with x402 v1 fields; the PAYMENT-REQUIRED header carries x402 v2.',
    headers: {
      'PAYMENT-REQUIRED': {
        description: 'The x402 v2 PaymentRequired object, base64-encoded JSON',
        schema: { type: 'string' },
      },
    },
  })
  @ApiResponse({ status: 200, type: FreePathView, description: 'Free path: no gate.' })
  @ApiResponse({ status: 409, description: 'The publisher has no payout address.' })
  @ApiResponse({
    status: 414,
    description:
      'The path is longer than 2048 bytes (UTF-8, as JSON): no access token can carry it, so it is not sold.',
  })
  async create(
    @CurrentSite() site: SiteWithPayout,
    @Body() body: CreateGateDto,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<GateOffer | FreePathView> {
    const created = await this.gates.create(site, body.url, requestBaseUrl(this.config, request));
    if (created.kind === 'free') {
      void reply.status(200);
      return { status: 'free', price_usd: '0', url: created.url };
    }
    void reply.status(402).headers({ 'payment-required': created.paymentRequired, 'cache-control': 'no-store' });
    return created.offer;
  }

  @Get(':id')
  @NoStore() // its status changes as it is paid
  @ApiOperation({ summary: 'Look up a gate and whether it is paid' })
  @ApiResponse({
    status: 200,
    type: GateView,
    description:
      'The gate and its status: open, settling or paid. The id is the signed offer; forged, tampered, other-site and expired unpaid gates are 404.',
  })
  @ApiResponse({ status: 404, description: 'Gate not found or expired' })
  view(@Param('id') id: string, @Req() request: FastifyRequest) {
    return this.gates.view(id, requestBaseUrl(this.config, request));
  }
}
