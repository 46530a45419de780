import { MAX_URL_LENGTH } from '@crawlgate/core';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsString, MaxLength } from 'class-validator';
import { Optional } from '../http/validators';

export class VerifyAccessTokenDto {
  @ApiProperty({ description: 'The access token: base64url(payload).base64url(signature)' })
  @IsDefined()
  @IsString()
  @MaxLength(4096)
  token!: string;

  @ApiPropertyOptional({
    description: 'When given, the token must be bound to this path (or URL).',
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
  @ApiPropertyOptional({ enum: ['malformed', 'bad_signature', 'expired', 'wrong_site', 'wrong_path'] }) reason?: string;
}
