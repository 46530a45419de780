import type { PaymentRejection } from '@crawlgate/core';
import { ApiError } from '../http/api-error';

/** 402 with an x402-style `reason`: the proof does not pay this gate; nothing was charged. */
export class PaymentRejected extends ApiError {
  constructor(
    readonly reason: string,
    detail: string,
  ) {
    super(402, detail, { reason } satisfies Omit<PaymentRejection, 'detail'>);
  }
}

/** A payer whose relayed transaction reverted lately is not relayed (RelayRefusalsStore). */
export const RELAY_REASONS = {
  refused: 'payer_not_relayed',
} as const;

/** Reasons of the tx-hash path, which x402 has no names for. */
export const TRANSFER_REASONS = {
  transactionNotFound: 'transaction_not_found',
  transactionFailed: 'transaction_failed',
  noUsdcTransfer: 'invalid_asset',
  predatesGate: 'transaction_predates_gate',
  afterGateExpired: 'transaction_after_gate_expiry',
  /** The proof lacks the signature of the transfer's payer over this gate and hash: anyone can read a hash off the chain. */
  notSignedByPayer: 'invalid_transfer_proof_signature',
} as const;
