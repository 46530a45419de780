import type { SiteOffer } from '@crawlgate/core';
import { Controller, Get, Inject, UseGuards } from '@nestjs/common';
import { ApiProperty, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { SiteTokenGuard } from '../auth/guards';
import { CurrentSite, type SiteWithPayout } from '../auth/request-context';
import type { ChainContext } from '../chain/chain-context';
import { CHAIN } from '../chain/tokens';
import { PriceRuleView } from './pricing.dto';
import { PricingService } from './pricing.service';

export class SiteOfferView implements SiteOffer {
  @ApiProperty({ format: 'uuid' }) site_id!: string;
  @ApiProperty() domain!: string;
  @ApiProperty() default_price_usd!: string;
  @ApiProperty({ type: [PriceRuleView] }) rules!: PriceRuleView[];
  @ApiProperty() pricing_version!: number;
  @ApiProperty({ example: 'base-sepolia' }) network!: string;
  @ApiProperty({ example: 'eip155:84532' }) caip2!: string;
  @ApiProperty() chain_id!: number;
  @ApiProperty() asset!: string;
  @ApiProperty({ nullable: true, type: String, description: 'null until the publisher sets a payout address' }) pay_to!: string | null;
}

/** What a site's middleware publishes about itself (e.g. /.well-known/pay.json): its prices and how to pay. */
@ApiTags('gates')
@Controller('site')
export class SiteOfferController {
  constructor(
    private readonly pricing: PricingService,
    @Inject(CHAIN) private readonly chain: ChainContext,
  ) {}

  @Get()
  @UseGuards(SiteTokenGuard)
  @ApiSecurity('site-token')
  @ApiResponse({ status: 200, type: SiteOfferView, description: 'The site that owns the X-Site-Token: pricing, network, asset and pay-to.' })
  async offer(@CurrentSite() site: SiteWithPayout): Promise<SiteOfferView> {
    const pricing = await this.pricing.view(site);
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
      pay_to: site.publisher.payoutAddress,
    };
  }
}
