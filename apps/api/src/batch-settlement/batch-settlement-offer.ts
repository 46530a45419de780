import type { BatchSettlementOffer } from '@crawlgate/core';
import { ApiProperty } from '@nestjs/swagger';
import type { ChainContext } from '../chain/chain-context';
import { batchSettlementTerms } from '../gates/gates.service';

export class BatchSettlementOfferView implements BatchSettlementOffer {
  @ApiProperty({ description: 'The escrow contract (the EIP-712 verifyingContract of channels and vouchers)' })
  escrow!: string;
  @ApiProperty({ description: 'Every channel’s receiverAuthorizer: the key that signs claims' })
  receiver_authorizer!: string;
  @ApiProperty({ type: 'integer', description: 'The channels’ withdraw delay' }) withdraw_delay_seconds!: number;
}

/** GET /v1/site's batch_settlement: the channel terms when the site takes vouchers, else null. */
export function batchSettlementOffer(
  chain: ChainContext,
  site: { batchSettlement: boolean },
): BatchSettlementOffer | null {
  const terms = site.batchSettlement ? batchSettlementTerms(chain) : undefined;
  return terms
    ? {
        escrow: terms.escrow,
        receiver_authorizer: terms.receiverAuthorizer,
        withdraw_delay_seconds: terms.withdrawDelay,
      }
    : null;
}
