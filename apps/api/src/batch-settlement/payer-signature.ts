import { BATCH_REASONS, type BatchSettlementPayment } from '@crawlgate/core';
import { isAddressEqual } from 'viem';
import type { BatchSettlementChain, ChainContext } from '../chain/chain-context';
import { voucherSigner } from '../chain/escrow';
import { PaymentRejected } from '../payments/payment-rejected';

/** Whether the channel's payer authorizer signed the payload's voucher as strictly as the escrow checks it. */
export async function payerSigned(
  chain: ChainContext,
  batch: BatchSettlementChain,
  payment: BatchSettlementPayment,
): Promise<boolean> {
  const signer = await voucherSigner(chain, batch, payment.voucher);
  return signer !== null && isAddressEqual(signer, payment.channelConfig.payerAuthorizer);
}

/** Refuses a payload whose voucher the channel's payer authorizer did not sign as strictly as the escrow checks it. */
export async function requirePayerSignature(
  chain: ChainContext,
  batch: BatchSettlementChain,
  payment: BatchSettlementPayment,
): Promise<void> {
  assertPayerSigned(await payerSigned(chain, batch, payment));
}

/** The refusal of a voucher payerSigned() found not signed by the channel's payer authorizer. */
export function assertPayerSigned(signed: boolean): void {
  if (!signed)
    throw new PaymentRejected(
      BATCH_REASONS.voucherSignature,
      'The voucher is not signed by the channel’s payer authorizer (65-byte ECDSA with low s)',
    );
}
