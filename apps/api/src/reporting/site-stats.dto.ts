import type { PublisherStats, PublisherTopPath, SiteStats, StatsDay, TopAgent, TopPath } from '@crawlgate/core';
import { ApiProperty, OmitType } from '@nestjs/swagger';

export class TopPathView implements TopPath {
  @ApiProperty({ example: '/articles/42' }) url!: string;
  @ApiProperty({ type: 'integer' }) paid_gates!: number;
  @ApiProperty({ example: '0.05' }) revenue_usd!: string;
}

export class TopAgentView implements TopAgent {
  @ApiProperty({ description: 'EIP-55 checksummed.' }) address!: string;
  @ApiProperty({ type: 'integer' }) paid_gates!: number;
  @ApiProperty({ example: '0.05' }) revenue_usd!: string;
}

export class StatsDayView implements StatsDay {
  @ApiProperty({ format: 'date', example: '2026-11-02' }) day!: string;
  @ApiProperty() revenue_usd!: string;
  @ApiProperty({ type: 'integer' }) paid_gates!: number;
  @ApiProperty({ type: 'integer' }) gates_created!: number;
}

export class SiteStatsView implements SiteStats {
  @ApiProperty({ format: 'uuid' }) site_id!: string;
  @ApiProperty({ format: 'date', description: 'First UTC day of the range.' }) from!: string;
  @ApiProperty({ format: 'date', description: 'Last UTC day of the range, included.' }) to!: string;
  @ApiProperty({ example: '1.25' }) revenue_usd!: string;
  @ApiProperty({ description: 'Atomic USDC units (6 decimals), as a string.', example: '1250000' })
  revenue_amount!: string;
  @ApiProperty({ type: 'integer', description: 'Confirmed payments in the range (one per gate).' }) paid_gates!: number;
  @ApiProperty({ type: 'integer', description: 'Priced gates created in the range.' }) gates_created!: number;
  @ApiProperty({
    description: 'paid_gates / gates_created with 4 decimals, "0" when no gate was created.',
    example: '0.2500',
  })
  conversion!: string;
  @ApiProperty({ type: 'integer', description: 'Distinct paying wallets.' }) unique_agents!: number;
  @ApiProperty({ type: [TopPathView], description: 'Up to 10 paths by revenue.' }) top_paths!: TopPathView[];
  @ApiProperty({ type: [TopAgentView], description: 'Up to 10 wallets by revenue.' }) top_agents!: TopAgentView[];
  @ApiProperty({ type: [StatsDayView], description: 'Every day of the range, oldest first, zeros included.' })
  by_day!: StatsDayView[];
}

export class PublisherTopPathView extends TopPathView implements PublisherTopPath {
  @ApiProperty({ format: 'uuid', description: 'The site the path is on.' }) site_id!: string;
}

export class PublisherStatsView
  extends OmitType(SiteStatsView, ['site_id', 'top_paths'] as const)
  implements PublisherStats
{
  @ApiProperty({ type: [PublisherTopPathView], description: 'Up to 10 paths by revenue, over every site.' })
  top_paths!: PublisherTopPathView[];
}
