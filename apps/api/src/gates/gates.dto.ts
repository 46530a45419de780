import { ApiProperty } from '@nestjs/swagger';
import { IsDefined, IsString, Matches, MaxLength } from 'class-validator';

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
