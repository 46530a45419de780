import { MAX_ACCESS_TOKEN_LENGTH, MAX_URL_LENGTH, TOKEN_INVALID_REASONS } from '@crawlgate/core';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsString, MaxLength } from 'class-validator';
import { Optional } from '../http/validators';

export class VerifyAccessTokenDto {
  @ApiProperty({ description: 'The access token: base64url(payload).base64url(signature)' })
  @IsDefined()
  @IsString()
  @MaxLength(MAX_ACCESS_TOKEN_LENGTH)
  token!: string;

  @ApiPropertyOptional({
    description:
      'The path (or URL) asked for: the token must be bound to it. Send it: without it, the answer says only whether the token is valid for the site, and a token bought for any one page of it is.',
    example: '/blog/post-1',
  })
  @Optional()
  @IsString()
  @MaxLength(MAX_URL_LENGTH)
  url?: string;
}

export class AccessTokenCheckView {
  @ApiProperty() valid!: boolean;
  @ApiPropertyOptional({ format: 'uuid' }) gate_id?: string;
  @ApiPropertyOptional() url?: string;
  @ApiPropertyOptional({ type: 'integer', description: 'Unix seconds' }) exp?: number;
  @ApiPropertyOptional({ enum: TOKEN_INVALID_REASONS }) reason?: string;
}
