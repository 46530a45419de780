import type { SiteChannelsView, SiteChannelView } from '@crawlgate/core';
import { ApiProperty } from '@nestjs/swagger';

const ATOMIC = 'Atomic USDC units (6 decimals), as a string.';

export class SiteChannelViewDto implements SiteChannelView {
  @ApiProperty({ description: 'The channel id (EIP-712 hash of its config).', example: `0x${'ab'.repeat(32)}` })
  channel_id!: string;
  @ApiProperty({ description: 'The paying wallet, EIP-55 checksummed.' }) payer!: string;
  @ApiProperty({ description: `${ATOMIC} This site's vouchers on the channel already claimed.`, example: '40000' })
  claimed_amount!: string;
  @ApiProperty({ description: `${ATOMIC} This site's vouchers on the channel not claimed yet.`, example: '10000' })
  unclaimed_amount!: string;
  @ApiProperty({ format: 'date-time', description: 'When this site last accepted a voucher on the channel.' })
  last_voucher_at!: string;
}

export class SiteChannelsViewDto implements SiteChannelsView {
  @ApiProperty({ format: 'uuid' }) site_id!: string;
  @ApiProperty({
    description: `${ATOMIC} Voucher payments whose channels have claimed them (swept to the payout address).`,
    example: '40000',
  })
  claimed_amount!: string;
  @ApiProperty({ example: '0.04' }) claimed_usd!: string;
  @ApiProperty({
    description: `${ATOMIC} Voucher payments accepted (the pages were served) and still in the payers' escrowed channels.`,
    example: '10000',
  })
  unclaimed_amount!: string;
  @ApiProperty({ example: '0.01' }) unclaimed_usd!: string;
  @ApiProperty({
    type: [SiteChannelViewDto],
    description: 'Up to 100 channels with vouchers for this site, most recent voucher first.',
  })
  channels!: SiteChannelViewDto[];
}
