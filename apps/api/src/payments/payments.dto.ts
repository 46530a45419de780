import {
  HEX_BYTES,
  transferProofMessage,
  type ChannelStateView,
  type PaidGate,
  type RefundedChannel,
  type PaymentRejection,
  type PendingPayment,
  type VerifyPaymentRequest,
  type VoucherPaid,
  type VoucherStateView,
} from '@crawlgate/core';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsObject, IsString, Matches, MaxLength } from 'class-validator';
import { Optional } from '../http/validators';

/** Room for an ERC-6492 signature of a wallet not deployed yet (factory calldata included); an EOA's is 65 bytes. */
const MAX_SIGNATURE_BYTES = 4096;
const MAX_SIGNATURE_HEX_LENGTH = 2 + 2 * MAX_SIGNATURE_BYTES;

export class VerifyPaymentDto implements VerifyPaymentRequest {
  @ApiPropertyOptional({
    description:
      'The decoded X-PAYMENT (x402 v1) or PAYMENT-SIGNATURE (v2) object: an EIP-3009 transferWithAuthorization signed by the payer.',
    type: 'object',
    additionalProperties: true,
  })
  @Optional()
  @IsObject()
  payment?: Record<string, unknown>;

  @ApiPropertyOptional({
    description: 'Hash of a USDC transfer to pay_to that the agent already sent; goes with `signature`.',
    example: '0x…',
  })
  @Optional()
  @IsString()
  @Matches(/^0x[0-9a-fA-F]{64}$/, { message: 'tx_hash must be 0x followed by 64 hex characters' })
  tx_hash?: string;

  @ApiPropertyOptional({
    description:
      "With `tx_hash`, required: the transfer payer's EIP-191 (personal_sign) signature of the message " +
      `${JSON.stringify(transferProofMessage('<gate ref>', '<tx_hash>'))} (the gate's \`ref\` and the hash in lower case; core's transferProofMessage). ` +
      'Smart wallets may answer with an ERC-1271 or ERC-6492 signature. Without it a transfer proves nothing about who presents it: 402.',
    example: '0x…',
    maxLength: MAX_SIGNATURE_HEX_LENGTH,
  })
  @Optional()
  @IsString()
  @MaxLength(MAX_SIGNATURE_HEX_LENGTH, { message: `signature must be at most ${MAX_SIGNATURE_BYTES} bytes` })
  @Matches(HEX_BYTES, { message: 'signature must be 0x followed by an even number of hex characters' })
  signature?: string;

  @ApiPropertyOptional({
    description:
      "With `tx_hash`, optional: the transfer's payer. A transaction may carry several payers' transfers to pay_to; a plain signature's signer is found among them however many, but a contract wallet's is asked of the first 32 payers only, unless the proof names it here.",
    example: '0x…',
  })
  @Optional()
  @IsString()
  @Matches(/^0x[0-9a-fA-F]{40}$/, { message: 'payer must be 0x followed by 40 hex characters' })
  payer?: string;

  @ApiPropertyOptional({
    description:
      'With a `payment`: answer only for a payment of this gate already recorded with this EIP-3009 authorization (paid, pending or failed) or this batch-settlement voucher (taken), never settle or take a new one, nor a refund (402 `invalid_payload`). For a gate offered below the price of its path now: its payer may have paid it before the price rose, and its answer been lost; nobody may start paying it at the old price.',
  })
  @Optional()
  @IsBoolean()
  recorded_only?: boolean;
}

/** x402's channelState, with x402's field names. */
export class ChannelStateViewDto implements ChannelStateView {
  @ApiProperty() channelId!: `0x${string}`;
  @ApiProperty({ description: 'Atomic units on chain' }) balance!: string;
  @ApiProperty() totalClaimed!: string;
  @ApiProperty({ type: 'integer', description: 'Unix seconds; 0 when no withdrawal is pending' })
  withdrawRequestedAt!: number;
  @ApiProperty() refundNonce!: string;
  @ApiProperty({ description: 'What this API has charged the channel in total' }) chargedCumulativeAmount!: string;
}

export class VoucherStateViewDto implements VoucherStateView {
  @ApiProperty() signedMaxClaimable!: string;
  @ApiProperty() signature!: `0x${string}`;
}

export class VoucherPaidView implements VoucherPaid {
  @ApiProperty() channel_id!: string;
  @ApiProperty({ description: 'Atomic units this gate charged' }) charged_amount!: string;
  @ApiProperty({ type: ChannelStateViewDto }) channel_state!: ChannelStateViewDto;
  @ApiProperty({ nullable: true, type: String }) deposit_tx_hash!: string | null;
  @ApiProperty({ nullable: true, type: String }) deposit_amount!: string | null;
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
  @ApiPropertyOptional({
    type: () => VoucherPaidView,
    description:
      'When an x402 batch-settlement voucher paid: the charge and the channel (tx_hash is then the deposit’s, or empty for a voucher alone)',
  })
  batch_settlement?: VoucherPaidView;
}

export class RefundedView implements RefundedChannel {
  @ApiProperty({ example: 'refunded' }) status!: 'refunded';
  @ApiProperty({ format: 'uuid' }) gate_id!: string;
  @ApiProperty() channel_id!: string;
  @ApiProperty() payer!: string;
  @ApiProperty({ description: 'Atomic units returned to the payer (the escrow’s Refunded event)' })
  refund_amount!: string;
  @ApiProperty({ description: 'The transaction that claimed what was charged, settled it, then refunded' })
  refund_tx_hash!: string;
  @ApiProperty() network!: string;
  @ApiProperty({ type: ChannelStateViewDto }) channel_state!: ChannelStateViewDto;
}

export class PaymentRejectedView implements PaymentRejection {
  @ApiProperty({ example: 'The authorization is for 1000 atomic units; the gate costs exactly 5000' }) detail!: string;
  @ApiProperty({
    description: 'An x402 reason code, or one of the tx-hash path’s',
    example: 'invalid_exact_evm_payload_authorization_value',
  })
  reason!: string;
  @ApiPropertyOptional({
    type: ChannelStateViewDto,
    description:
      'x402’s corrective 402 (reason invalid_batch_settlement_evm_cumulative_amount_mismatch): the channel as this API counts it',
  })
  channel_state?: ChannelStateViewDto;
  @ApiPropertyOptional({
    type: VoucherStateViewDto,
    description: 'With channel_state, when this API holds a voucher for the channel: the payer’s own last one',
  })
  voucher_state?: VoucherStateViewDto;
}

export class PendingView implements PendingPayment {
  @ApiProperty({ example: 'settlement_pending' }) status!: 'settlement_pending';
  @ApiProperty({ format: 'uuid' }) gate_id!: string;
  @ApiProperty({ nullable: true, type: String }) tx_hash!: string | null;
  @ApiProperty() detail!: string;
}
