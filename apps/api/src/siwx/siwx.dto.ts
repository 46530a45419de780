import { MAX_SIWX_HEADER_LENGTH, MAX_URL_LENGTH, type SiwxAccess, type SiwxAccessRequest } from '@crawlgate/core';
import { ApiProperty } from '@nestjs/swagger';
import { IsDefined, IsIP, IsOptional, IsString, Matches, MaxLength } from 'class-validator';

export class SiwxAccessDto implements SiwxAccessRequest {
  @ApiProperty({
    description:
      "The SIGN-IN-WITH-X header as the client sent it: base64 JSON of x402's sign-in-with-x proof (CAIP-122 / SIWE)",
  })
  @IsDefined()
  @IsString()
  @MaxLength(MAX_SIWX_HEADER_LENGTH)
  proof!: string;

  @ApiProperty({
    description: 'The path the middleware would serve, as it priced it (the path of the paid gate)',
    example: '/blog/post-1',
  })
  @IsDefined()
  @IsString()
  @MaxLength(MAX_URL_LENGTH)
  @Matches(/^\//, { message: 'url must be a path starting with "/"' })
  url!: string;

  @ApiProperty({
    required: false,
    description:
      "The visitor's IP address as the middleware saw it: sign-ins are counted per wallet the proof names and per visitor (100 a minute), so proofs posing as a payer from elsewhere never hold it off",
    example: '203.0.113.9',
  })
  @IsOptional()
  @IsIP()
  client_ip?: string;
}

export class SiwxAccessView implements SiwxAccess {
  @ApiProperty({ description: "The access token the wallet's payment for this path was given, unchanged (same exp)" })
  access_token!: string;
  @ApiProperty({ format: 'date-time' }) expires_at!: string;
  @ApiProperty({ description: 'The path the token opens' }) url!: string;
  @ApiProperty({ description: 'The paying wallet, lower-case' }) payer!: string;
}
