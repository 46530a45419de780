import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsDefined, IsInt, IsString, Matches, Max, MaxLength, Min, ValidateNested } from 'class-validator';

export class CreateGateDto {
  @ApiProperty({ description: 'Path (or absolute http(s) URL) of the requested resource; the query does not affect the price.', example: '/blog/post-1?ref=feed' })
  @IsDefined() @IsString() @MaxLength(2048)
  @Matches(/^(\/|https?:\/\/[^\s/]+)(\S*)$/, { message: 'url must be a path starting with "/" or an absolute http(s) URL, without spaces' })
  url!: string;
}

export class FreePathView {
  @ApiProperty({ example: 'free' }) status!: 'free';
  @ApiProperty({ example: '0' }) price_usd!: '0';
  @ApiProperty() url!: string;
}

export class DayGateCountDto {
  @ApiProperty({ description: 'UTC day, YYYY-MM-DD: today or one of the two days before.', example: '2026-11-23' })
  @IsDefined() @IsString() @Matches(/^\d{4}-\d{2}-\d{2}$/, { message: 'day must be a UTC date, YYYY-MM-DD' })
  day!: string;

  @ApiProperty({ description: 'Gates (402s) offered that day since the last report.', minimum: 1, maximum: 1_000_000 })
  @IsDefined() @IsInt() @Min(1) @Max(1_000_000)
  gates!: number;
}

export class GateCountsDto {
  @ApiProperty({ type: [DayGateCountDto], maxItems: 3 })
  @IsDefined() @IsArray() @ArrayMaxSize(3) @ValidateNested({ each: true }) @Type(() => DayGateCountDto)
  counts!: DayGateCountDto[];
}
