/*
 * The x402 payment a request carries, and the settlement header we answer with. x402 v1 clients
 * pay with X-PAYMENT and read X-PAYMENT-RESPONSE; v2 clients pay with PAYMENT-SIGNATURE and read
 * PAYMENT-RESPONSE. The answer always uses the pair the request used.
 */

import {
  decodeBase64Json,
  encodeBase64Json,
  isBatchSettlementPayment,
  MAX_PAYMENT_HEADER_LENGTH,
  parseBatchSettlementPayment,
  parsePaymentPayload,
  type SettleResponse,
} from '@crawlgate/core';
import { headerValue, type HeaderRecord } from './request-headers';

/** The x402 payment headers, v2's first: the one read when a request carries both. */
export const PAYMENT_HEADERS = ['payment-signature', 'x-payment'] as const;

export type PaymentHeaderName = (typeof PAYMENT_HEADERS)[number];

export type PresentedPayment =
  /** `payment` is the decoded object, as the API's verify takes it; `network` and `payer` as it states them. */
  | {
      ok: true;
      via: PaymentHeaderName;
      payment: Record<string, unknown>;
      network: string;
      payer: string;
      scheme: 'exact' | 'batch-settlement';
    }
  | { ok: false; via: PaymentHeaderName; msg: string };

/** The payment header of a request (PAYMENT-SIGNATURE first), decoded and checked; undefined when there is none. */
export function presentedPayment(headers: HeaderRecord): PresentedPayment | undefined {
  const via = PAYMENT_HEADERS.find((name) => headerValue(headers, name));
  if (!via) return undefined;
  const value = headerValue(headers, via)!;
  if (value.length > MAX_PAYMENT_HEADER_LENGTH)
    return { ok: false, via, msg: `${via} is longer than ${MAX_PAYMENT_HEADER_LENGTH} characters` };
  const decoded = decodeBase64Json(value.trim());
  if (decoded === undefined) return { ok: false, via, msg: `${via} is not base64 JSON` };
  const payment = decoded as Record<string, unknown>;
  // An x402 batch-settlement voucher (with or without its deposit); the API checks the rest.
  if (isBatchSettlementPayment(decoded)) {
    const batch = parseBatchSettlementPayment(decoded);
    if (!batch.ok) return { ok: false, via, msg: batch.msg };
    return {
      ok: true,
      via,
      payment,
      network: batch.payment.accepted.network,
      payer: batch.payment.channelConfig.payer,
      scheme: 'batch-settlement',
    };
  }
  const parsed = parsePaymentPayload(decoded);
  if (!parsed.ok) return { ok: false, via, msg: parsed.msg };
  return { ok: true, via, payment, network: parsed.network, payer: parsed.payload.authorization.from, scheme: 'exact' };
}

/** True when the request carries any x402 payment header, valid or not: it comes from an agent. */
export function hasPaymentHeader(headers: HeaderRecord): boolean {
  return PAYMENT_HEADERS.some((name) => headerValue(headers, name) !== undefined);
}

/** The settlement header answering a payment sent with `via`: name and base64 JSON value. */
export function settlementHeader(via: PaymentHeaderName, settlement: SettleResponse): Record<string, string> {
  return { [via === 'payment-signature' ? 'payment-response' : 'x-payment-response']: encodeBase64Json(settlement) };
}
