/*
 * What the agent reads from a site's answers and from the Crawlgate API, through core's types of
 * them (a field renamed in core fails to compile here). The answers come from whoever the agent
 * fetched, or from the verify_url a 402 named, so every value is checked before it is used: a
 * field of the wrong type counts as absent.
 */

import {
  decodeBase64Json,
  hasFieldKinds,
  untrusted,
  type AgentPayment,
  type AgentPaymentPage,
  type AgentProfile,
  type ApiErrorBody,
  type FieldKinds,
  type PaidGate,
  type PaymentRejection,
  type SettleResponse,
} from '@crawlgate/core';
import { isHash } from 'viem';

/**
 * The most characters of a site's own words (a refusal's reason and detail, a settlement's
 * errorReason) the agent keeps: they go into PaymentFailedError's message, and on into logs and
 * the assistants an agent answers; a site could otherwise send a megabyte of them.
 */
export const MAX_SITE_TEXT = 200;

/** `text` as the agent keeps a site's words: at most MAX_SITE_TEXT characters, marked when cut. */
export function siteText(text: string): string {
  return text.length <= MAX_SITE_TEXT ? text : `${text.slice(0, MAX_SITE_TEXT - 1)}…`;
}

/** The part of x402's settlement header (SettleResponse) the agent acts on. */
export type Settlement = Partial<Pick<SettleResponse, 'success' | 'errorReason' | 'transaction'>>;

/** An answer's settlement to a payment: its X-PAYMENT-RESPONSE (v1), else its PAYMENT-RESPONSE (v2). */
export const settlementIn = (answer: Response): Settlement | undefined =>
  settlementOf(answer.headers.get('x-payment-response') ?? answer.headers.get('payment-response'));

/** A PAYMENT-RESPONSE (v2) or X-PAYMENT-RESPONSE (v1) header; undefined when absent or not base64 JSON of an object. */
export function settlementOf(header: string | null): Settlement | undefined {
  const body = untrusted<SettleResponse>(decodeBase64Json(header ?? ''));
  if (!body) return undefined;
  return {
    ...(typeof body.success === 'boolean' ? { success: body.success } : {}),
    ...(typeof body.errorReason === 'string' ? { errorReason: siteText(body.errorReason) } : {}),
    // A transaction hash, or none (''): anything else would reach onPayment's txHash as the site wrote it.
    ...(typeof body.transaction === 'string' && (body.transaction === '' || isHash(body.transaction))
      ? { transaction: body.transaction }
      : {}),
  };
}

/** Why a payment was refused, as the answer's body says it (PaymentRejection, or any API error's detail). */
export type Refusal = Partial<Pick<PaymentRejection, 'reason' | 'detail'>>;

export function refusalOf(body: unknown): Refusal {
  const rejection = untrusted<PaymentRejection>(body);
  return {
    ...(typeof rejection?.reason === 'string' ? { reason: siteText(rejection.reason) } : {}),
    ...(typeof rejection?.detail === 'string' ? { detail: siteText(rejection.detail) } : {}),
  };
}

/** POST /v1/gates/{id}/verify's answer: PaidGate's access token (empty counts as none), or why not. */
export function verifyAnswerOf(body: unknown): Refusal & { accessToken?: string } {
  const token = untrusted<PaidGate>(body)?.access_token;
  return { ...refusalOf(body), ...(typeof token === 'string' && token !== '' ? { accessToken: token } : {}) };
}

/** An API error's detail when it is a sentence (a 422's list is not shown). */
export function errorDetailOf(body: unknown): string | undefined {
  const detail = untrusted<ApiErrorBody>(body)?.detail;
  return typeof detail === 'string' ? siteText(detail) : undefined;
}

const PROFILE: FieldKinds<AgentProfile> = {
  address: ['string'],
  payments_count: ['number'],
  total_spent_usd: ['string'],
  total_spent_amount: ['string'],
  first_payment_at: ['string', 'null'],
  last_payment_at: ['string', 'null'],
  sites_count: ['number'],
};

const PAYMENT: FieldKinds<AgentPayment> = {
  payment_id: ['string'],
  gate_id: ['string'],
  site_id: ['string'],
  url: ['string'],
  amount: ['string'],
  price_usd: ['string'],
  tx_hash: ['string', 'null'],
  scheme: ['string'],
  channel_id: ['string', 'null'],
  network: ['string'],
  paid_at: ['string'],
};

const PAGE: FieldKinds<AgentPaymentPage> = { items: ['array'], next_cursor: ['string', 'null'] };

/** GET /v1/agents/me's answer, its fields of the types AgentProfile names. */
export function isAgentProfile(body: unknown): body is AgentProfile {
  return hasFieldKinds<AgentProfile>(body, PROFILE);
}

/** GET /v1/agents/me/payments's answer, every item's fields of the types AgentPayment names. */
export function isAgentPaymentPage(body: unknown): body is AgentPaymentPage {
  return (
    hasFieldKinds<AgentPaymentPage>(body, PAGE) &&
    body.items.every((item: unknown) => hasFieldKinds<AgentPayment>(item, PAYMENT))
  );
}
