import {
  HEX_BYTES,
  MAX_PASSWORD_LENGTH,
  MAX_PAYOUT_PROOF_LENGTH,
  MIN_PASSWORD_LENGTH,
  type ChangePasswordInput,
  type IssuedApiKey,
  type Publisher,
  type RegisteredPublisher,
} from '@crawlgate/core';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsDefined, IsEmail, IsOptional, IsString, Matches, MaxLength, MinLength, ValidateIf } from 'class-validator';
import { RejectsUnknownFields } from '../http/validation.pipe';
import { IsPayoutAddressString, IsPlainEmailText, Optional, ProvesNamedPayoutAddress } from '../http/validators';

const trimLower = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim().toLowerCase() : value);

export class RegisterPublisherDto {
  @ApiProperty({ example: 'editor@example.com', maxLength: 254 })
  @Transform(trimLower)
  @IsDefined()
  @IsString()
  @MaxLength(254)
  @IsEmail({}, { message: 'Must be an email address' })
  @IsPlainEmailText()
  email!: string;

  @ApiProperty({
    minLength: MIN_PASSWORD_LENGTH,
    maxLength: MAX_PASSWORD_LENGTH,
    example: 'correct horse battery staple',
  })
  @IsDefined()
  @IsString()
  @MinLength(MIN_PASSWORD_LENGTH)
  @MaxLength(MAX_PASSWORD_LENGTH)
  password!: string;

  @ApiPropertyOptional({ maxLength: 200, example: 'Example News' })
  @Optional()
  @IsString()
  @MaxLength(200)
  name?: string;
}

export class LoginDto {
  @ApiProperty({ example: 'editor@example.com' })
  @Transform(trimLower)
  @IsDefined()
  @IsString()
  @MaxLength(254)
  email!: string;

  @ApiProperty()
  @IsDefined()
  @IsString()
  @MaxLength(MAX_PASSWORD_LENGTH)
  password!: string;
}

export class ChangePasswordDto implements ChangePasswordInput {
  @ApiProperty()
  @IsDefined()
  @IsString()
  @MaxLength(MAX_PASSWORD_LENGTH)
  current_password!: string;

  @ApiProperty({ minLength: MIN_PASSWORD_LENGTH, maxLength: MAX_PASSWORD_LENGTH })
  @IsDefined()
  @IsString()
  @MinLength(MIN_PASSWORD_LENGTH)
  @MaxLength(MAX_PASSWORD_LENGTH)
  new_password!: string;
}

@RejectsUnknownFields()
export class UpdatePublisherDto {
  @ApiPropertyOptional({ type: String, maxLength: 200, nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  name?: string | null;

  @ApiPropertyOptional({
    type: String,
    description:
      "EVM address that receives payments: not the zero address, nor the USDC token's, the batch-settlement escrow's or its deposit collector's, nor this API's relayer or claim authorizer (400), and in mixed case its EIP-55 checksum must hold. Changing it requires the X-Confirm-Password header. null clears it.",
    example: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    nullable: true,
  })
  @ValidateIf((body: UpdatePublisherDto) => body.payout_address !== null && body.payout_address !== undefined)
  @IsPayoutAddressString()
  payout_address?: string | null;

  @ApiPropertyOptional({
    type: String,
    maxLength: MAX_PAYOUT_PROOF_LENGTH,
    description:
      "Proof that you hold payout_address: its EIP-191 (personal_sign) signature of the text `Crawlgate payout address <address, lowercase> for publisher <your publisher_id>`; a smart wallet's (ERC-1271, ERC-6492) is checked on chain. Needed only to name an address another publisher names already; a proof takes the address from every publisher that named it without one.",
  })
  @Optional()
  @IsString()
  @MaxLength(MAX_PAYOUT_PROOF_LENGTH)
  @Matches(HEX_BYTES, { message: 'Must be a signature: 0x followed by hexadecimal bytes' })
  @ProvesNamedPayoutAddress()
  payout_proof?: string;
}

export class PublisherView implements Publisher {
  @ApiProperty({ format: 'uuid' }) publisher_id!: string;
  @ApiProperty() email!: string;
  @ApiProperty({ nullable: true, type: String }) name!: string | null;
  @ApiProperty({ nullable: true, type: String }) payout_address!: string | null;
  @ApiProperty({ description: 'Whether payout_address signed for this publisher (payout_proof)' })
  payout_address_proven!: boolean;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
}

export class ApiKeyView implements IssuedApiKey {
  @ApiProperty({ format: 'uuid' }) publisher_id!: string;
  @ApiProperty({ description: 'Shown once; only its SHA-256 hash is stored.', example: 'xk_pub_…' }) api_key!: string;
}

export class RegisteredPublisherView extends PublisherView implements RegisteredPublisher {
  @ApiProperty({ description: 'Shown once; only its SHA-256 hash is stored.', example: 'xk_pub_…' }) api_key!: string;
}
