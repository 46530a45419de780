/*
 * The x402 payment a request carries, and the settlement header we answer with. x402 v1 clients
 * pay with X-PAYMENT and read X-PAYMENT-RESPONSE; v2 clients pay with PAYMENT-SIGNATURE and read
 * PAYMENT-RESPONSE. The answer always uses the pair the request used.
 */

import { decodeBase64Json, encodeBase64Json, parsePaymentPayload, type ParsedPaymentPayload, type SettleResponse } from '@crawlgate/core';
import { headerValue, type HeaderRecord } from './request-headers';

export type PaymentHeaderName = 'x-payment' | 'payment-signature';

export type PresentedPayment =
  /** `payment` is the decoded object, as the API's verify takes it. */
  | { ok: true; via: PaymentHeaderName; payment: Record<string, unknown>; parsed: Extract<ParsedPaymentPayload, { ok: true }> }
  | { ok: false; via: PaymentHeaderName; msg: string };

/** The payment header of a request (PAYMENT-SIGNATURE first), decoded and checked; undefined when there is none. */
export function presentedPayment(headers: HeaderRecord): PresentedPayment | undefined {
  const via: PaymentHeaderName | undefined = headerValue(headers, 'payment-signature') ? 'payment-signature' : headerValue(headers, 'x-payment') ? 'x-payment' : undefined;
  if (!via) return undefined;
  const decoded = decodeBase64Json(headerValue(headers, via)!.trim());
  if (decoded === undefined) return { ok: false, via, msg: `${via} is not base64 JSON` };
  const parsed = parsePaymentPayload(decoded);
  if (!parsed.ok) return { ok: false, via, msg: parsed.msg };
  return { ok: true, via, payment: decoded as Record<string, unknown>, parsed };
}

/** True when the request carries any x402 payment header, valid or not: it comes from an agent. */
export function hasPaymentHeader(headers: HeaderRecord): boolean {
  return headerValue(headers, 'payment-signature') !== undefined || headerValue(headers, 'x-payment') !== undefined;
}

/** The settlement header answering a payment sent with `via`: name and base64 JSON value. */
export function settlementHeader(via: PaymentHeaderName, settlement: SettleResponse): Record<string, string> {
  return { [via === 'payment-signature' ? 'payment-response' : 'x-payment-response']: encodeBase64Json(settlement) };
}
