import {
  BOT_ACTIONS,
  BOT_CATEGORIES,
  MAX_POLICY_BOTS,
  type BotAction,
  type BotCategory,
  type BotPolicyInput,
  type BotPolicyOffer,
  type RequireSignature,
  type SetBotActionInput,
  type SiteBotPolicy,
} from '@crawlgate/core';
import { ApiProperty, ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import { Allow, IsObject } from 'class-validator';
import { RejectsUnknownFields } from '../http/validation.pipe';
import { IgnoredReadOnlyField, Optional } from '../http/validators';

/*
 * The DTOs check the shape only (objects where objects go); core's botPolicyInputProblems checks
 * every category, action and name, so the API stores exactly what the middleware applies.
 */

const ACTION = { type: 'string' as const, enum: [...BOT_ACTIONS] };
const CATEGORIES_DOC: ApiPropertyOptions = {
  type: 'object',
  properties: Object.fromEntries(BOT_CATEGORIES.map((category) => [category, ACTION])),
  additionalProperties: false,
  description: 'Action per category; a category left out gets the default (`defaults`).',
  example: { seo: 'block', 'ai-assistant': 'allow' },
};
const BOTS_DOC: ApiPropertyOptions = {
  type: 'object',
  additionalProperties: ACTION,
  maxProperties: MAX_POLICY_BOTS,
  description:
    'Action per crawler, keyed by its name in the middleware’s catalogue (any case; stored as the catalogue spells it), or `unknown-crawler` / `unknown-automation`. Wins over the crawler’s category.',
  example: { GPTBot: 'block', Googlebot: 'allow' },
};
const SIGNED_CATEGORIES_DOC: ApiPropertyOptions = {
  type: 'array',
  items: { type: 'string', enum: [...BOT_CATEGORIES] },
  description: 'Categories whose crawlers must sign',
};
const SIGNED_BOTS_DOC: ApiPropertyOptions = {
  type: 'array',
  items: { type: 'string' },
  maxItems: MAX_POLICY_BOTS,
  description: 'Catalogue names of crawlers that must sign',
};

export class RequireSignatureInputDto {
  @ApiPropertyOptional(SIGNED_CATEGORIES_DOC) categories?: BotCategory[];
  @ApiPropertyOptional(SIGNED_BOTS_DOC) bots?: string[];
}

@RejectsUnknownFields()
export class BotPolicyDto implements BotPolicyInput {
  @IgnoredReadOnlyField() site_id?: unknown;
  @IgnoredReadOnlyField() defaults?: unknown;
  @IgnoredReadOnlyField() version?: unknown;
  @IgnoredReadOnlyField() updated_at?: unknown;

  @ApiPropertyOptional(CATEGORIES_DOC)
  @Optional()
  @IsObject({ message: 'categories must be an object of category → action' })
  categories?: Partial<Record<BotCategory, BotAction>>;

  @ApiPropertyOptional(BOTS_DOC)
  @Optional()
  @IsObject({ message: 'bots must be an object of catalogue name → action' })
  bots?: Record<string, BotAction>;

  @ApiPropertyOptional({
    type: RequireSignatureInputDto,
    description:
      'Crawlers that must carry a valid Web Bot Auth signature: an unsigned request of one is never allowed.',
  })
  @Optional()
  @IsObject({ message: 'require_signature must be an object with optional lists categories and bots' })
  require_signature?: RequireSignatureInputDto;
}

@RejectsUnknownFields()
export class BotActionDto implements SetBotActionInput {
  @ApiProperty({ type: 'string', enum: [...BOT_ACTIONS], description: 'What the middleware does with this crawler' })
  @Allow()
  action!: BotAction;
}

export class RequireSignatureView implements RequireSignature {
  @ApiProperty(SIGNED_CATEGORIES_DOC) categories!: BotCategory[];
  @ApiProperty(SIGNED_BOTS_DOC) bots!: string[];
}

export class SiteBotPolicyView implements SiteBotPolicy {
  @ApiProperty({ format: 'uuid' }) site_id!: string;
  @ApiProperty(CATEGORIES_DOC) categories!: Partial<Record<BotCategory, BotAction>>;
  @ApiProperty(BOTS_DOC) bots!: Record<string, BotAction>;
  @ApiProperty({ type: RequireSignatureView }) require_signature!: RequireSignatureView;
  @ApiProperty({
    type: 'object',
    properties: Object.fromEntries(BOT_CATEGORIES.map((category) => [category, ACTION])),
    required: [...BOT_CATEGORIES],
    additionalProperties: false,
    description:
      'The middleware’s action for a category the policy leaves out. A crawler’s effective action: its entry in `bots`, else its category’s in `categories`, else this.',
  })
  defaults!: Record<BotCategory, BotAction>;
  @ApiProperty({ type: 'integer', description: '0 until the policy is first set; increases with every change.' })
  version!: number;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) updated_at!: string | null;
}

export class BotPolicyOfferView implements BotPolicyOffer {
  @ApiProperty({
    ...CATEGORIES_DOC,
    description:
      'Every category: the site’s own action, else the default, so that a middleware of any version applies the current defaults',
  })
  categories!: Partial<Record<BotCategory, BotAction>>;
  @ApiProperty({
    type: 'array',
    items: { type: 'string', enum: [...BOT_CATEGORIES] },
    description:
      'The categories `categories` fills with the default (the site sets none there): a gate whose own defaults are newer takes the stricter of the two',
  })
  default_categories!: BotCategory[];
  @ApiProperty(BOTS_DOC) bots!: Record<string, BotAction>;
  @ApiProperty({ type: RequireSignatureView }) require_signature!: RequireSignatureView;
  @ApiProperty({
    type: 'integer',
    description: 'Increases with every change of the policy, and of the defaults (the policy’s version plus theirs).',
  })
  version!: number;
}
