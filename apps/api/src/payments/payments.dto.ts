import type { PaidGate } from '@crawlgate/core';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsObject, IsString, Matches } from 'class-validator';
import { Optional } from '../http/validators';

export class VerifyPaymentDto {
  @ApiPropertyOptional({
    description: 'The decoded X-PAYMENT (x402 v1) or PAYMENT-SIGNATURE (v2) object: an EIP-3009 transferWithAuthorization signed by the payer.',
    type: 'object',
    additionalProperties: true,
  })
  @Optional() @IsObject()
  payment?: Record<string, unknown>;

  @ApiPropertyOptional({ description: 'Hash of a USDC transfer to pay_to that the agent already sent.', example: '0x…' })
  @Optional() @IsString() @Matches(/^0x[0-9a-fA-F]{64}$/, { message: 'tx_hash must be 0x followed by 64 hex characters' })
  tx_hash?: string;
}

export class PaidView implements PaidGate {
  @ApiProperty({ example: 'paid' }) status!: 'paid';
  @ApiProperty({ description: 'base64url(payload).base64url(HMAC-SHA256)' }) access_token!: string;
  @ApiProperty({ format: 'date-time' }) expires_at!: string;
  @ApiProperty({ format: 'uuid' }) gate_id!: string;
  @ApiProperty() url!: string;
  @ApiProperty() tx_hash!: string;
  @ApiProperty() payer!: string;
  @ApiProperty({ description: 'Atomic USDC units' }) amount!: string;
  @ApiProperty() price_usd!: string;
  @ApiProperty() network!: string;
}

export class PendingView {
  @ApiProperty({ example: 'settlement_pending' }) status!: 'settlement_pending';
  @ApiProperty({ format: 'uuid' }) gate_id!: string;
  @ApiProperty({ nullable: true, type: String }) tx_hash!: string | null;
  @ApiProperty() detail!: string;
}
