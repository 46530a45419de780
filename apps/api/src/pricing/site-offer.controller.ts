import {
  MAX_URL_LENGTH,
  secretFingerprint,
  type BotPolicyOffer,
  type SiteOffer,
  type UsableSecretView,
} from '@crawlgate/core';
import { Controller, Get, Inject, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ApiOperation, ApiProperty, ApiResponse, ApiTags } from '@nestjs/swagger';
import { SiteTokenAuth } from '../auth/authenticated';
import { batchSettlementOffer, BatchSettlementOfferView } from '../batch-settlement/batch-settlement-offer';
import { CurrentSite, type SiteWithPayout } from '../auth/request-context';
import { BotPolicyOfferView } from '../bot-policy/bot-policy.dto';
import { BotPolicyService } from '../bot-policy/bot-policy.service';
import type { ChainContext } from '../chain/chain-context';
import { ownAddressRole } from '../chain/own-addresses';
import { CHAIN } from '../chain/tokens';
import type { AppConfig } from '../config/config';
import { CONFIG } from '../db/tokens';
import { SiteSecretsService } from '../sites/site-secrets.service';
import { requestBaseUrl } from '../http/request-base-url';
import { PriceRuleView } from './pricing.dto';
import { PricingService } from './pricing.service';

export class UsableSecretViewDoc implements UsableSecretView {
  @ApiProperty({ description: 'secretFingerprint() of the secret (an HMAC under it of a fixed label)' })
  fingerprint!: string;
  @ApiProperty({ nullable: true, type: String, format: 'date-time', description: 'null for the current secret' })
  retires_at!: string | null;
}

export class SiteOfferView implements SiteOffer {
  @ApiProperty({ format: 'uuid' }) site_id!: string;
  @ApiProperty() domain!: string;
  @ApiProperty() default_price_usd!: string;
  @ApiProperty({ type: [PriceRuleView] }) rules!: PriceRuleView[];
  @ApiProperty({ type: 'integer' }) pricing_version!: number;
  @ApiProperty({ example: 'base-sepolia' }) network!: string;
  @ApiProperty({ example: 'eip155:84532' }) caip2!: string;
  @ApiProperty({ type: 'integer' }) chain_id!: number;
  @ApiProperty() asset!: string;
  @ApiProperty({ example: 'base-sepolia', description: 'The x402 v1 name of the network' }) x402_network!: string;
  @ApiProperty({ example: 'USDC', description: 'The asset’s EIP-712 domain name' }) asset_name!: string;
  @ApiProperty({ example: '2' }) asset_version!: string;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'null until the publisher sets a payout address (one payments may go to)',
  })
  pay_to!: string | null;
  @ApiProperty({ type: 'integer', description: 'How long a gate stays payable' }) gate_ttl_seconds!: number;
  @ApiProperty({ type: 'integer', description: 'How long a paid access token opens its path' })
  access_token_ttl_seconds!: number;
  @ApiProperty({ type: 'integer', description: 'How long verify waits for a settlement before answering 202' })
  settlement_timeout_seconds!: number;
  @ApiProperty({ type: 'integer' }) max_url_length!: number;
  @ApiProperty({ description: 'The API’s public base URL; every verify_url is under it' }) api_base_url!: string;
  @ApiProperty({
    type: BotPolicyOfferView,
    description: 'The site’s bot policy (PUT /v1/sites/{id}/bot-policy); its version increases with every change',
  })
  bot_policy!: BotPolicyOffer;
  @ApiProperty({
    type: BatchSettlementOfferView,
    nullable: true,
    description:
      'The channel terms every gate offers with x402 batch-settlement; null while the site does not take vouchers',
  })
  batch_settlement!: BatchSettlementOfferView | null;
  @ApiProperty({
    type: [UsableSecretViewDoc],
    description:
      'Each access-token secret that verifies now, the current one first: the middleware signs and verifies with the configured secrets listed, so a revoked secret stops at every gate within its refresh',
  })
  usable_secrets!: UsableSecretViewDoc[];
}

/** A payout address no payment may go to (ownAddressRole: named before such were refused) is none: the site cannot charge. */
const payableAddress = (chain: ChainContext, address: string | null) =>
  address !== null && ownAddressRole(chain, address) === undefined ? address : null;

/**
 * A site's terms for its middleware: its prices, how to pay, the gate settings and the bot policy,
 * so the middleware prices requests and mints gates itself (no API call per 402) and copies no API default.
 * Also what it publishes at /.well-known/pay.json.
 */
@ApiTags('gates')
@Controller('site')
export class SiteOfferController {
  constructor(
    private readonly pricing: PricingService,
    private readonly botPolicies: BotPolicyService,
    private readonly secrets: SiteSecretsService,
    @Inject(CHAIN) private readonly chain: ChainContext,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  @SiteTokenAuth()
  @ApiOperation({ summary: 'The site’s terms for its middleware: prices, network, asset and pay-to' })
  @ApiResponse({
    status: 200,
    type: SiteOfferView,
    description: 'The site that owns the X-Site-Token: pricing, network, asset and pay-to.',
  })
  async offer(@CurrentSite() site: SiteWithPayout, @Req() request: FastifyRequest): Promise<SiteOfferView> {
    const [pricing, botPolicy, secrets] = await Promise.all([
      this.pricing.view(site),
      this.botPolicies.offer(site.id),
      this.secrets.usable(site.id, site.secretsVersion),
    ]);
    return {
      site_id: site.id,
      domain: site.domain,
      default_price_usd: pricing.default_price_usd,
      rules: pricing.rules,
      pricing_version: pricing.version,
      network: this.chain.network.name,
      caip2: this.chain.network.caip2,
      chain_id: this.chain.chainId,
      asset: this.chain.usdc,
      x402_network: this.chain.network.x402Network,
      asset_name: this.chain.usdcName,
      asset_version: this.chain.usdcVersion,
      pay_to: payableAddress(this.chain, site.publisher.payoutAddress),
      gate_ttl_seconds: this.config.gateTtlSeconds,
      access_token_ttl_seconds: this.config.accessTokenTtlSeconds,
      settlement_timeout_seconds: Math.ceil(this.chain.settlementTimeoutMs / 1000),
      max_url_length: MAX_URL_LENGTH,
      api_base_url: requestBaseUrl(this.config, request),
      bot_policy: botPolicy,
      batch_settlement: batchSettlementOffer(this.chain, site),
      // The current secret (no retirement date) first: the one gates are signed with.
      usable_secrets: [...secrets]
        .sort((a, b) => Number(a.retiresAt !== null) - Number(b.retiresAt !== null))
        .map((secret) => ({
          fingerprint: secretFingerprint(secret.secret),
          retires_at: secret.retiresAt?.toISOString() ?? null,
        })),
    };
  }
}
