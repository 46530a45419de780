import {
  MAX_PRICE_STRING_LENGTH,
  MAX_RULES_PER_SITE,
  PRICE_STRING_PATTERN,
  type PriceResolution,
  type Pricing,
  type PricingApplied,
  type PricingRule,
} from '@crawlgate/core';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsDefined, IsString, ValidateIf } from 'class-validator';
import { RejectsUnknownFields } from '../http/validation.pipe';
import { EachNested, IgnoredReadOnlyField, IsPathPattern, IsPriceUsd, Optional } from '../http/validators';

const PRICE_DOC = {
  oneOf: [
    { type: 'number', minimum: 0, maximum: 1 },
    { type: 'string', pattern: PRICE_STRING_PATTERN, maxLength: MAX_PRICE_STRING_LENGTH },
  ],
  description: 'USD, 0..1, at most 6 decimals; a JSON number or a decimal string. "0" makes the path free.',
  example: '0.005',
};

export class PriceRuleDto {
  @ApiPropertyOptional({
    description: 'fnmatch-style glob: `*` one segment, `?` one character, `[...]` a class; `**` is rejected.',
    example: '/blog/*',
  })
  @ValidateIf((rule: PriceRuleDto) => rule.path_pattern === undefined || rule.path !== undefined)
  @IsDefined({ message: 'Each rule needs `path` (or its alias `path_pattern`)' })
  @IsString()
  @IsPathPattern()
  path?: string;

  @ApiPropertyOptional({ description: 'Alias of `path`, as in the request example of the spec.' })
  @ValidateIf((rule: PriceRuleDto) => rule.path_pattern !== undefined)
  @IsString()
  @IsPathPattern()
  path_pattern?: string;

  @ApiProperty(PRICE_DOC)
  @IsPriceUsd()
  price_usd!: number | string;
}

@RejectsUnknownFields()
export class PricingDto {
  @IgnoredReadOnlyField() site_id?: unknown;
  @IgnoredReadOnlyField() version?: unknown;
  @IgnoredReadOnlyField() updated_at?: unknown;

  @ApiProperty(PRICE_DOC)
  @IsPriceUsd()
  default_price_usd!: number | string;

  @ApiPropertyOptional({
    type: [PriceRuleDto],
    maxItems: MAX_RULES_PER_SITE,
    description: 'Ordered; the first matching rule sets the price.',
  })
  @Optional()
  @IsArray()
  @ArrayMaxSize(MAX_RULES_PER_SITE)
  @EachNested(() => PriceRuleDto)
  rules?: PriceRuleDto[];
}

export class PricingAppliedView implements PricingApplied {
  @ApiProperty({ type: 'integer' }) rules_applied!: number;
}

export class PriceRuleView implements PricingRule {
  @ApiProperty() path!: string;
  @ApiProperty({ example: '0.005' }) price_usd!: string;
}

export class PricingView implements Pricing {
  @ApiProperty({ format: 'uuid' }) site_id!: string;
  @ApiProperty({ example: '0.001' }) default_price_usd!: string;
  @ApiProperty({ type: [PriceRuleView] }) rules!: PriceRuleView[];
  @ApiProperty({ type: 'integer', description: 'Increases with every change.' }) version!: number;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) updated_at!: string | null;
}

export class PriceResolutionView implements PriceResolution {
  @ApiProperty({ description: 'The path the rules were matched against (query removed, percent-decoded).' })
  path!: string;
  @ApiProperty() price_usd!: string;
  @ApiProperty({
    nullable: true,
    type: 'integer',
    description: 'Index of the winning rule; null when the default applied.',
  })
  rule!: number | null;
  @ApiProperty({ nullable: true, type: String }) pattern!: string | null;
}
