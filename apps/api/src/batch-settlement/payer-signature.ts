import { BATCH_REASONS, type BatchSettlementPayment } from '@crawlgate/core';
import { isAddressEqual } from 'viem';
import type { BatchSettlementChain, ChainContext } from '../chain/chain-context';
import { voucherSigner } from '../chain/escrow';
import { PaymentRejected } from '../payments/payment-rejected';

/** Refuses a payload whose voucher the channel's payer authorizer did not sign as strictly as the escrow checks it. */
export async function requirePayerSignature(
  chain: ChainContext,
  batch: BatchSettlementChain,
  payment: BatchSettlementPayment,
): Promise<void> {
  const signer = await voucherSigner(chain, batch, payment.voucher);
  if (!signer || !isAddressEqual(signer, payment.channelConfig.payerAuthorizer)) {
    throw new PaymentRejected(
      BATCH_REASONS.voucherSignature,
      'The voucher is not signed by the channel’s payer authorizer (65-byte ECDSA with low s)',
    );
  }
}
