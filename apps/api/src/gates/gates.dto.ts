import {
  MAX_CRAWLER_COUNTS_PER_REPORT,
  MAX_CRAWLER_PATHS_PER_REPORT,
  MAX_URL_LENGTH,
  type GateOffer,
  type PaymentRequirementsV1,
} from '@crawlgate/core';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsDefined,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { CrawlerCountDto, CrawlerPathCountDto } from '../crawlers/crawlers.dto';
import { EachNested, IsGateUrl } from '../http/validators';

export class CreateGateDto {
  @ApiProperty({
    description: 'Path (or absolute http(s) URL) of the requested resource; the query does not affect the price.',
    example: '/blog/post-1?ref=feed',
  })
  @IsDefined()
  @IsString()
  @MaxLength(MAX_URL_LENGTH)
  @Matches(/^(\/|https?:\/\/[^\s/]+)(\S*)$/, {
    message: 'url must be a path starting with "/" or an absolute http(s) URL, without spaces',
  })
  @IsGateUrl()
  url!: string;
}

export class FreePathView {
  @ApiProperty({ example: 'free' }) status!: 'free';
  @ApiProperty({ example: '0' }) price_usd!: '0';
  @ApiProperty() url!: string;
}

/** One way to pay the gate, as x402 v1 writes it. */
export class PaymentRequirementsV1View implements PaymentRequirementsV1 {
  @ApiProperty({ example: 'exact' }) scheme!: string;
  @ApiProperty({ description: 'The x402 v1 network name', example: 'base-sepolia' }) network!: string;
  @ApiProperty({ description: 'Atomic USDC units (6 decimals), a decimal string', example: '5000' })
  maxAmountRequired!: string;
  @ApiProperty({ description: 'The URL on the site the payment opens' }) resource!: string;
  @ApiProperty() description!: string;
  @ApiProperty() mimeType!: string;
  @ApiPropertyOptional({ oneOf: [{ type: 'object', additionalProperties: true }, { type: 'null' }] })
  outputSchema?: Record<string, unknown> | null;
  @ApiProperty() payTo!: string;
  @ApiProperty({ type: 'integer' }) maxTimeoutSeconds!: number;
  @ApiProperty({ description: 'The USDC contract' }) asset!: string;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'The token’s EIP-712 domain `{name, version}` and the `gate_id`',
  })
  extra?: Record<string, unknown>;
}

/** The 402 body: the gate (a signed offer; nothing is stored) with x402 v1's fields. */
export class GateOfferView implements GateOffer {
  @ApiProperty({ description: 'The signed offer: what verify_url and GET /v1/gates/{id} take' }) id!: string;
  @ApiProperty({ format: 'uuid', description: 'The gate’s name in payments, access tokens and histories' })
  ref!: string;
  @ApiProperty({ format: 'uuid' }) site_id!: string;
  @ApiProperty({ description: 'The path the payment unlocks, normalised' }) url!: string;
  @ApiProperty({ enum: ['open', 'settling', 'paid', 'expired'] }) status!: GateOffer['status'];
  @ApiProperty({ example: '0.005' }) price_usd!: string;
  @ApiProperty({ description: 'Atomic USDC units (6 decimals), a decimal string', example: '5000' }) amount!: string;
  @ApiProperty({ description: 'The USDC contract' }) asset!: string;
  @ApiProperty({ example: 'base-sepolia' }) network!: string;
  @ApiProperty({ type: 'integer', example: 84532 }) chain_id!: number;
  @ApiProperty() pay_to!: string;
  @ApiProperty({ format: 'date-time' }) expires_at!: string;
  @ApiProperty({ description: 'Where to POST the payment' }) verify_url!: string;
  @ApiProperty({ type: 'integer', enum: [1] }) x402Version!: 1;
  @ApiProperty() error!: string;
  @ApiProperty({ type: [PaymentRequirementsV1View] }) accepts!: PaymentRequirementsV1View[];
}

export class GateView extends GateOfferView {
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) paid_at!: string | null;
  @ApiProperty({ nullable: true, type: String }) tx_hash!: string | null;
}

export class DayGateCountDto {
  @ApiProperty({ description: 'UTC day, YYYY-MM-DD: today or one of the two days before.', example: '2026-11-23' })
  @IsDefined()
  @IsString()
  @Matches(/^\d{4}-\d{2}-\d{2}$/, { message: 'day must be a UTC date, YYYY-MM-DD' })
  day!: string;

  @ApiProperty({
    type: 'integer',
    description: 'Gates (402s) offered that day since the last report.',
    minimum: 1,
    maximum: 1_000_000,
  })
  @IsDefined()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  gates!: number;
}

/** The middleware's batched report: gates offered, and (optionally) what it did per crawler. */
export class GateCountsDto {
  @ApiProperty({ type: [DayGateCountDto], maxItems: 3 })
  @IsDefined()
  @IsArray()
  @ArrayMaxSize(3)
  @EachNested(() => DayGateCountDto)
  counts!: DayGateCountDto[];

  @ApiPropertyOptional({
    type: [CrawlerCountDto],
    maxItems: MAX_CRAWLER_COUNTS_PER_REPORT,
    description: 'Requests per crawler, action and verification since the last report.',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_CRAWLER_COUNTS_PER_REPORT)
  @EachNested(() => CrawlerCountDto)
  crawlers?: CrawlerCountDto[];

  @ApiPropertyOptional({
    type: [CrawlerPathCountDto],
    maxItems: MAX_CRAWLER_PATHS_PER_REPORT,
    description: 'Requests per crawler and path (its top paths) since the last report.',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_CRAWLER_PATHS_PER_REPORT)
  @EachNested(() => CrawlerPathCountDto)
  paths?: CrawlerPathCountDto[];
}
