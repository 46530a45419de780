import { BATCH_REASONS, type BatchSettlementPayment } from '@crawlgate/core';
import type { BatchSettlementChain, ChainContext } from '../chain/chain-context';
import { voucherSignedBy } from '../chain/escrow';
import type { SignerKeys } from '../chain/signer-keys';
import { PaymentRejected } from '../payments/payment-rejected';

/** Whether the channel's payer authorizer signed the payload's voucher as strictly as the escrow checks it. */
export async function payerSigned(
  chain: ChainContext,
  batch: BatchSettlementChain,
  payment: BatchSettlementPayment,
  keys: SignerKeys,
): Promise<boolean> {
  return voucherSignedBy(chain, batch, payment.voucher, payment.channelConfig.payerAuthorizer, keys);
}

/** Refuses a payload whose voucher the channel's payer authorizer did not sign as strictly as the escrow checks it. */
export async function requirePayerSignature(
  chain: ChainContext,
  batch: BatchSettlementChain,
  payment: BatchSettlementPayment,
  keys: SignerKeys,
): Promise<void> {
  assertPayerSigned(await payerSigned(chain, batch, payment, keys));
}

/** The refusal of a voucher payerSigned() found not signed by the channel's payer authorizer. */
export function assertPayerSigned(signed: boolean): void {
  if (!signed)
    throw new PaymentRejected(
      BATCH_REASONS.voucherSignature,
      'The voucher is not signed by the channel’s payer authorizer (65-byte ECDSA with low s)',
    );
}
