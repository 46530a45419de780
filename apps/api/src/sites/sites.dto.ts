import {
  DOMAIN_PATTERN,
  type CreatedSite,
  type DeletedSite,
  type RotatedSiteToken,
  type SecretRotation,
  type Site,
  type SiteList,
} from '@crawlgate/core';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsDefined, IsInt, IsOptional, IsString, Matches, MaxLength, Min } from 'class-validator';
import { RejectsUnknownFields } from '../http/validation.pipe';
import { Optional } from '../http/validators';

const normalizeDomain = ({ value }: { value: unknown }) =>
  typeof value === 'string' ? value.trim().toLowerCase().replace(/\.$/, '') : value;
const DOMAIN_MESSAGE =
  'Must be a host name such as example.com, optionally with a port from 1 to 65535 (example.com:8080), without scheme or path';

@RejectsUnknownFields()
export class CreateSiteDto {
  @ApiProperty({ example: 'news.example.com' })
  @Transform(normalizeDomain)
  @IsDefined()
  @IsString()
  @MaxLength(259)
  @Matches(DOMAIN_PATTERN, { message: DOMAIN_MESSAGE })
  domain!: string;

  @ApiPropertyOptional({ maxLength: 200 })
  @Optional()
  @IsString()
  @MaxLength(200)
  name?: string;
}

@RejectsUnknownFields()
export class UpdateSiteDto {
  @ApiPropertyOptional({ example: 'news.example.com' })
  @Transform(normalizeDomain)
  @Optional()
  @IsString()
  @MaxLength(259)
  @Matches(DOMAIN_PATTERN, { message: DOMAIN_MESSAGE })
  domain?: string;

  @ApiPropertyOptional({ type: String, maxLength: 200, nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  name?: string | null;

  @ApiPropertyOptional({
    description:
      'Offer x402 `batch-settlement` beside `exact` in every gate: agents deposit once into an escrow channel and pay each page with a signed voucher, claimed in batches later. 409 when this API has no claim authorizer (CLAIM_AUTHORIZER_PRIVATE_KEY).',
  })
  @Optional()
  @IsBoolean()
  batch_settlement?: boolean;
}

@RejectsUnknownFields()
export class RotateSecretDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    example: 0,
    description:
      'How long the previous secret keeps verifying tokens it signed, in seconds: 0 revokes it at once (a leaked secret). ' +
      'At most SECRET_GRACE_SECONDS (3600 unless configured), which is also the default. Any older secret stops verifying at once.',
  })
  @Optional()
  @IsInt()
  @Min(0)
  grace_seconds?: number;
}

export class SiteView implements Site {
  @ApiProperty({ format: 'uuid' }) site_id!: string;
  @ApiProperty() domain!: string;
  @ApiProperty({ nullable: true, type: String }) name!: string | null;
  @ApiProperty({ example: '0.005' }) default_price_usd!: string;
  @ApiProperty({ type: 'integer' }) rules_count!: number;
  @ApiProperty({ description: 'Gates offer x402 batch-settlement (escrowed vouchers) beside exact' })
  batch_settlement!: boolean;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ format: 'date-time' }) updated_at!: string;
}

export class SiteListView implements SiteList {
  @ApiProperty({ type: [SiteView] }) items!: SiteView[];
}

export class CreatedSiteView extends SiteView implements CreatedSite {
  @ApiProperty({ description: 'Shown once; only its SHA-256 hash is stored.', example: 'st_…' }) site_token!: string;
  @ApiProperty({ description: 'HMAC key for local access-token verification. Shown once.', example: 'cgsec_…' })
  access_token_secret!: string;
  @ApiProperty({ description: 'Key id of the secret, carried in tokens as `kid`.' }) kid!: string;
}

export class SiteTokenView implements RotatedSiteToken {
  @ApiProperty({ format: 'uuid' }) site_id!: string;
  @ApiProperty({ description: 'Shown once. The previous token stops working at once.' }) site_token!: string;
}

export class SecretRotationView implements SecretRotation {
  @ApiProperty({ format: 'uuid' }) site_id!: string;
  @ApiProperty({ description: 'Shown once.' }) access_token_secret!: string;
  @ApiProperty() kid!: string;
  @ApiProperty({
    type: [String],
    description:
      'The previous key id, which still verifies tokens until previous_valid_until; empty when it was revoked at once.',
  })
  previous_kids!: string[];
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) previous_valid_until!: string | null;
}

export class DeletedSiteView implements DeletedSite {
  @ApiProperty({ format: 'uuid' }) site_id!: string;
  @ApiProperty() deleted!: true;
}
