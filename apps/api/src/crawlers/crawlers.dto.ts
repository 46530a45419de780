import {
  CRAWLER_ACTIONS,
  MAX_CRAWLER_NAME_LENGTH,
  MAX_TOP_PATH_LENGTH,
  type CrawlerAction,
  type CrawlerCount,
  type CrawlerDayView,
  type CrawlerPathCount,
  type CrawlerView,
  type SiteCrawlersView,
} from '@crawlgate/core';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  MinLength,
  ValidateIf,
} from 'class-validator';

import { MaxCodeUnits } from '../http/validators';
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MESSAGE = 'day must be a UTC date, YYYY-MM-DD';
/**
 * Names are shown in tables and CSV: letters and digits of any script first ("Cốc Cốc"), then also
 * spaces and . _ - / ( ) + : ! & ' ("Yahoo! Slurp"). No letter that shows as nothing (Hangul
 * fillers are letters, and default-ignorable): "GPTBot" and two of them read as GPTBot.
 */
const NAME = /^(?!.*\p{Default_Ignorable_Code_Point})[\p{L}\p{N}][\p{L}\p{N} ._\-/()+:!&']*$/u;
const NAME_MESSAGE =
  "must start with a letter or digit and hold only visible letters, digits, spaces and . _ - / ( ) + : ! & '";

export class CrawlerCountDto implements CrawlerCount {
  @ApiProperty({ description: 'UTC day, YYYY-MM-DD: today or one of the two days before.', example: '2026-11-23' })
  @IsDefined()
  @IsString()
  @Matches(DAY, { message: DAY_MESSAGE })
  day!: string;

  @ApiProperty({
    description: 'The bot\'s name, "person", or "unknown".',
    example: 'GPTBot',
    maxLength: MAX_CRAWLER_NAME_LENGTH,
  })
  @IsDefined()
  @IsString()
  @MinLength(1)
  @MaxCodeUnits(MAX_CRAWLER_NAME_LENGTH)
  @Matches(NAME, { message: `crawler ${NAME_MESSAGE}` })
  crawler!: string;

  @ApiProperty({ example: 'ai-crawler', maxLength: MAX_CRAWLER_NAME_LENGTH })
  @IsDefined()
  @IsString()
  @MinLength(1)
  @MaxCodeUnits(MAX_CRAWLER_NAME_LENGTH)
  @Matches(NAME, { message: `category ${NAME_MESSAGE}` })
  category!: string;

  @ApiProperty({ nullable: true, type: String, example: 'OpenAI', maxLength: MAX_CRAWLER_NAME_LENGTH })
  @ValidateIf((_, value) => value !== null)
  @IsDefined()
  @IsString()
  @MinLength(1)
  @MaxCodeUnits(MAX_CRAWLER_NAME_LENGTH)
  @Matches(NAME, { message: `operator ${NAME_MESSAGE}` })
  operator!: string | null;

  @ApiProperty({ enum: CRAWLER_ACTIONS })
  @IsDefined()
  @IsIn(CRAWLER_ACTIONS)
  action!: CrawlerAction;

  @ApiProperty({ description: 'Whether the request carried a valid Web Bot Auth signature.' })
  @IsDefined()
  @IsBoolean()
  verified!: boolean;

  @ApiProperty({ type: 'integer', minimum: 1, maximum: 1_000_000_000 })
  @IsDefined()
  @IsInt()
  @Min(1)
  @Max(1_000_000_000)
  requests!: number;

  @ApiProperty({
    description: 'Integer micro-USD of the pages served for pay, as a decimal string ("0" unless action is "paid").',
    example: '10000',
  })
  @IsDefined()
  @IsString()
  @Matches(/^(0|[1-9]\d{0,17})$/, {
    message: 'revenue_micros must be a whole number of micro-USD, as a string of at most 18 digits',
  })
  revenue_micros!: string;
}

export class CrawlerPathCountDto implements CrawlerPathCount {
  @ApiProperty({ description: 'UTC day, YYYY-MM-DD: today or one of the two days before.', example: '2026-11-23' })
  @IsDefined()
  @IsString()
  @Matches(DAY, { message: DAY_MESSAGE })
  day!: string;

  @ApiProperty({ example: 'GPTBot', maxLength: MAX_CRAWLER_NAME_LENGTH })
  @IsDefined()
  @IsString()
  @MinLength(1)
  @MaxCodeUnits(MAX_CRAWLER_NAME_LENGTH)
  @Matches(NAME, { message: `crawler ${NAME_MESSAGE}` })
  crawler!: string;

  @ApiProperty({
    description: 'The request path as priced (no query); a longer one is counted by the middleware, not listed.',
    example: '/articles/42',
    maxLength: MAX_TOP_PATH_LENGTH,
  })
  @IsDefined()
  @IsString()
  @MaxCodeUnits(MAX_TOP_PATH_LENGTH)
  @Matches(/^\/\S*$/, { message: 'path must start with "/" and hold no spaces' })
  path!: string;

  @ApiPropertyOptional({
    description:
      'Whether the crawler was verified on these requests; kept apart from the paths strangers asked for under its name. Default false.',
  })
  @IsOptional()
  @IsBoolean()
  verified?: boolean;

  @ApiProperty({ type: 'integer', minimum: 1, maximum: 1_000_000_000 })
  @IsDefined()
  @IsInt()
  @Min(1)
  @Max(1_000_000_000)
  requests!: number;
}

class CrawlerTopPathView {
  @ApiProperty() path!: string;
  @ApiProperty({ type: 'integer' }) requests!: number;
  @ApiProperty({ description: 'Requested by the crawler verified (a name any client can claim otherwise).' })
  verified!: boolean;
}

export class CrawlerViewDto implements CrawlerView {
  @ApiProperty({ example: 'GPTBot' }) crawler!: string;
  @ApiProperty({ example: 'ai-crawler' }) category!: string;
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'OpenAI',
    description: "The catalogue's operator; null for a name outside the catalogue, whatever the report claimed.",
  })
  operator!: string | null;
  @ApiProperty({ type: 'integer' }) requests!: number;
  @ApiProperty({ type: 'integer', description: 'People and bots the policy lets through free.' }) passed!: number;
  @ApiProperty({ type: 'integer' }) allowed!: number;
  @ApiProperty({ type: 'integer' }) blocked!: number;
  @ApiProperty({ type: 'integer', description: 'Answered 402.' }) charged!: number;
  @ApiProperty({ type: 'integer', description: 'Served with a payment.' }) paid!: number;
  @ApiProperty({ type: 'integer', description: 'Served with an access token bought earlier.' }) token!: number;
  @ApiProperty({
    example: '0.05',
    description:
      "What the middleware served for pay, as reported by it; when every crawler's together exceeds the site's confirmed payments over the same days, each is scaled down to them (rounded down). Payments carry no crawler name: the total is bounded by money, the split among crawlers is only as true as the reports.",
  })
  revenue_usd!: string;
  @ApiProperty({
    example: '0.5000',
    description:
      'Verified requests ÷ requests, 4 decimals; 0 for a name outside the catalogue and the middleware’s groups, and for other crawlers.',
  })
  verified_share!: string;
  @ApiProperty({
    type: [CrawlerTopPathView],
    description: 'Up to 20 paths: those it was verified on first, then the others, each by requests.',
  })
  top_paths!: CrawlerTopPathView[];
}

export class CrawlerDayViewDto implements CrawlerDayView {
  @ApiProperty({ format: 'date' }) day!: string;
  @ApiProperty({ type: 'integer' }) passed!: number;
  @ApiProperty({ type: 'integer' }) allowed!: number;
  @ApiProperty({ type: 'integer' }) blocked!: number;
  @ApiProperty({ type: 'integer' }) charged!: number;
  @ApiProperty({ type: 'integer' }) paid!: number;
  @ApiProperty({ type: 'integer' }) token!: number;
}

export class SiteCrawlersViewDto implements SiteCrawlersView {
  @ApiProperty({ format: 'uuid' }) site_id!: string;
  @ApiProperty({ format: 'date' }) from!: string;
  @ApiProperty({ format: 'date' }) to!: string;
  @ApiProperty({ type: [CrawlerViewDto], description: 'Every crawler seen in the range, most requests first.' })
  crawlers!: CrawlerViewDto[];
  @ApiProperty({ type: [CrawlerDayViewDto], description: 'Every day of the range, oldest first, zeros included.' })
  days!: CrawlerDayViewDto[];
}
