import type { AgentPayment, AgentPaymentPage, PaymentScheme, SitePayment, SitePaymentPage } from '@crawlgate/core';
import { ApiProperty } from '@nestjs/swagger';

export class PaymentItemView implements AgentPayment {
  @ApiProperty({ format: 'uuid' }) payment_id!: string;
  @ApiProperty({ format: 'uuid' }) gate_id!: string;
  @ApiProperty({ format: 'uuid' }) site_id!: string;
  @ApiProperty({ description: 'The path the payment unlocked.', example: '/articles/42' }) url!: string;
  @ApiProperty({ description: 'Atomic USDC units (6 decimals), as a string.', example: '5000' }) amount!: string;
  @ApiProperty({ example: '0.005' }) price_usd!: string;
  @ApiProperty({
    nullable: true,
    type: String,
    description:
      'The settlement transaction (exact); null for a voucher, whose money moves when its channel is claimed.',
  })
  tx_hash!: string | null;
  @ApiProperty({
    enum: ['exact', 'batch-settlement'],
    description: 'One on-chain transfer (exact), or a voucher on an escrowed channel (batch-settlement).',
  })
  scheme!: PaymentScheme;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'The batch-settlement channel a voucher was drawn on; null for exact.',
  })
  channel_id!: string | null;
  @ApiProperty({
    description: 'Network name (local, base-sepolia, base), or eip155:<chain id> for another chain.',
    example: 'base',
  })
  network!: string;
  @ApiProperty({ format: 'date-time', description: 'When the payment was confirmed on chain.' }) paid_at!: string;
}

export class SitePaymentItemView extends PaymentItemView implements SitePayment {
  @ApiProperty({ description: 'The paying wallet, EIP-55 checksummed.' }) payer!: string;
}

const NEXT_CURSOR = {
  nullable: true,
  type: String,
  description: 'Pass as ?cursor= for the next, older page; null on the last page.',
};

export class PaymentPageView implements AgentPaymentPage {
  @ApiProperty({ type: [PaymentItemView], description: 'Newest first.' }) items!: PaymentItemView[];
  @ApiProperty(NEXT_CURSOR) next_cursor!: string | null;
}

export class SitePaymentPageView implements SitePaymentPage {
  @ApiProperty({ type: [SitePaymentItemView], description: 'Newest first.' }) items!: SitePaymentItemView[];
  @ApiProperty(NEXT_CURSOR) next_cursor!: string | null;
}
