import type { AgentProfile } from '@crawlgate/core';
import { ApiProperty } from '@nestjs/swagger';

/** Totals of the wallet's confirmed payments; zeros and nulls for a wallet that never paid. */
export class AgentProfileView implements AgentProfile {
  @ApiProperty({ description: 'EIP-55 checksummed.' }) address!: string;
  @ApiProperty({ type: 'integer' }) payments_count!: number;
  @ApiProperty({ example: '0.125' }) total_spent_usd!: string;
  @ApiProperty({ description: 'Atomic USDC units (6 decimals), as a string.', example: '125000' })
  total_spent_amount!: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) first_payment_at!: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) last_payment_at!: string | null;
  @ApiProperty({ type: 'integer', description: 'Distinct sites paid.' }) sites_count!: number;
}
