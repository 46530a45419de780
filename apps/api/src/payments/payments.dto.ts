import { transferProofMessage, type PaidGate } from '@crawlgate/core';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsObject, IsString, Matches, MaxLength } from 'class-validator';
import { Optional } from '../http/validators';

/** Room for an ERC-6492 signature of a wallet not deployed yet (factory calldata included); an EOA's is 65 bytes. */
const MAX_SIGNATURE_BYTES = 4096;
const MAX_SIGNATURE_HEX_LENGTH = 2 + 2 * MAX_SIGNATURE_BYTES;

export class VerifyPaymentDto {
  @ApiPropertyOptional({
    description: 'The decoded X-PAYMENT (x402 v1) or PAYMENT-SIGNATURE (v2) object: an EIP-3009 transferWithAuthorization signed by the payer.',
    type: 'object',
    additionalProperties: true,
  })
  @Optional() @IsObject()
  payment?: Record<string, unknown>;

  @ApiPropertyOptional({ description: 'Hash of a USDC transfer to pay_to that the agent already sent; goes with `signature`.', example: '0x…' })
  @Optional() @IsString() @Matches(/^0x[0-9a-fA-F]{64}$/, { message: 'tx_hash must be 0x followed by 64 hex characters' })
  tx_hash?: string;

  @ApiPropertyOptional({
    description:
      'With `tx_hash`, required: the transfer payer\'s EIP-191 (personal_sign) signature of the message ' +
      `${JSON.stringify(transferProofMessage('<gate ref>', '<tx_hash>'))} (the gate's \`ref\` and the hash in lower case; core's transferProofMessage). ` +
      'Smart wallets may answer with an ERC-1271 or ERC-6492 signature. Without it a transfer proves nothing about who presents it: 402.',
    example: '0x…',
    maxLength: MAX_SIGNATURE_HEX_LENGTH,
  })
  @Optional() @IsString() @MaxLength(MAX_SIGNATURE_HEX_LENGTH, { message: `signature must be at most ${MAX_SIGNATURE_BYTES} bytes` })
  @Matches(/^0x(?:[0-9a-fA-F]{2})+$/, { message: 'signature must be 0x followed by an even number of hex characters' })
  signature?: string;
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

export class PaymentRejectedView {
  @ApiProperty({ example: 'The authorization is for 1000 atomic units; the gate costs exactly 5000' }) detail!: string;
  @ApiProperty({ description: 'An x402 reason code, or one of the tx-hash path’s', example: 'invalid_exact_evm_payload_authorization_value' }) reason!: string;
}

export class PendingView {
  @ApiProperty({ example: 'settlement_pending' }) status!: 'settlement_pending';
  @ApiProperty({ format: 'uuid' }) gate_id!: string;
  @ApiProperty({ nullable: true, type: String }) tx_hash!: string | null;
  @ApiProperty() detail!: string;
}
