/*
 * The 402 a gate answers with, built the same way by the API (POST /v1/gates, GET /v1/gates/{id})
 * and by the middleware (every unpaid bot request): our gate fields plus x402 v1's in the body, and
 * x402 v2's form in the PAYMENT-REQUIRED header. Both carry the gate id in the requirement's
 * `extra.gate_id`, which a v2 payment echoes back in `accepted`, so a payment names its gate.
 */

import type { GateOffer } from './api-types';
import { encodeBase64Json } from './base64url';
import {
  BATCH_SETTLEMENT_SCHEME,
  type BatchSettlementTerms,
  type ChannelStateView,
  type VoucherStateView,
} from './batch-settlement';
import type { GateTerms } from './gate';
import { MAX_AUTHORIZATION_SECONDS } from './limits';
import { PAYMENT_IDENTIFIER, paymentIdentifierDeclaration } from './payment-identifier';
import { formatMicrosUsd } from './price';
import type { PaymentRequiredV2 } from './x402';

/** How one deployment takes payments: its chain and token, as both v1 and v2 name them. */
export interface PaymentTerms {
  /** Our network name ("base", "local"). */
  network: string;
  /** The x402 v1 network name. */
  x402Network: string;
  caip2: string;
  /** The token's EIP-712 domain. */
  assetName: string;
  assetVersion: string;
  /** Set when the site takes x402 `batch-settlement` vouchers beside `exact`. */
  batchSettlement?: BatchSettlementTerms;
}

export interface OfferContext {
  /** The site's own domain: `resource` is always on it, whatever URL the request named. */
  domain: string;
  /** The API's public base URL, for verify_url. */
  apiBaseUrl: string;
  /** Path and query of the request, for `resource`; default the gate's path. */
  pathAndQuery?: string;
  status?: GateOffer['status'];
  /** Unix seconds; default now. */
  now?: number;
}

/** An `exact` requirement's `extra` as a gate states it: the token's EIP-712 domain, and the gate a v2 payment names by echoing it. */
export interface ExactExtra {
  name: string;
  version: string;
  gate_id: string;
}

/**
 * A `batch-settlement` requirement's `extra`: x402's channel terms beside the token's domain and the
 * gate; in x402's corrective 402 (PAYMENT-REQUIRED), also the server's channel and its last voucher.
 */
export interface BatchSettlementExtra extends ExactExtra, BatchSettlementTerms {
  channelState?: ChannelStateView;
  voucherState?: VoucherStateView;
}

export const GATE_OFFER_ERROR = 'Payment required: send an X-PAYMENT header, or POST the payment to verify_url';

export function buildGateOffer(id: string, gate: GateTerms, terms: PaymentTerms, context: OfferContext): GateOffer {
  const amount = gate.micros.toString();
  const now = context.now ?? Math.floor(Date.now() / 1000);
  return {
    id,
    ref: gate.ref,
    site_id: gate.siteId,
    url: gate.path,
    status: context.status ?? 'open',
    price_usd: formatMicrosUsd(gate.micros),
    amount,
    asset: gate.asset,
    network: terms.network,
    chain_id: gate.chainId,
    pay_to: gate.payTo,
    expires_at: new Date(gate.exp * 1000).toISOString(),
    verify_url: `${context.apiBaseUrl}/v1/gates/${id}/verify`,
    x402Version: 1,
    error: GATE_OFFER_ERROR,
    accepts: [
      {
        scheme: 'exact',
        network: terms.x402Network,
        maxAmountRequired: amount,
        resource: `https://${context.domain}${context.pathAndQuery ?? gate.path}`,
        description: `Access to ${gate.path} on ${context.domain}`,
        mimeType: '',
        payTo: gate.payTo,
        maxTimeoutSeconds: Math.max(1, Math.min(MAX_AUTHORIZATION_SECONDS, gate.exp - now)),
        asset: gate.asset,
        extra: { name: terms.assetName, version: terms.assetVersion, gate_id: id } satisfies ExactExtra,
      },
      ...batchSettlementAccepts(id, gate, terms, context, now),
    ],
  };
}

/** `batch-settlement` beside `exact` when the site takes it, with the `extra` x402's client builds its channel from. */
function batchSettlementAccepts(
  id: string,
  gate: GateTerms,
  terms: PaymentTerms,
  context: OfferContext,
  now: number,
): GateOffer['accepts'] {
  const batch = terms.batchSettlement;
  if (!batch) return [];
  return [
    {
      scheme: BATCH_SETTLEMENT_SCHEME,
      network: terms.x402Network,
      maxAmountRequired: gate.micros.toString(),
      resource: `https://${context.domain}${context.pathAndQuery ?? gate.path}`,
      description: `Access to ${gate.path} on ${context.domain}`,
      mimeType: '',
      payTo: gate.payTo,
      maxTimeoutSeconds: Math.max(1, Math.min(MAX_AUTHORIZATION_SECONDS, gate.exp - now)),
      asset: gate.asset,
      extra: {
        name: terms.assetName,
        version: terms.assetVersion,
        receiverAuthorizer: batch.receiverAuthorizer,
        withdrawDelay: batch.withdrawDelay,
        escrow: batch.escrow,
        gate_id: id,
      } satisfies BatchSettlementExtra,
    },
  ];
}

/** What a corrective 402 adds to the `batch-settlement` requirement: the server's channel and its last voucher. */
export interface ChannelCorrection {
  reason: string;
  channelState: ChannelStateView;
  voucherState?: VoucherStateView;
}

/**
 * x402 v2's form of the same requirements, base64 JSON for the PAYMENT-REQUIRED header. Every gate
 * declares `payment-identifier` (the API honours it on every payment); `extensions` adds others
 * (the middleware's sign-in-with-x challenge). `correction` makes it x402's corrective 402: its
 * reason as `error` and the server's channel state in the batch-settlement requirement.
 */
export function paymentRequiredHeader(
  offer: GateOffer,
  caip2: string,
  extensions: Record<string, unknown> = {},
  correction?: ChannelCorrection,
): string {
  const [v1] = offer.accepts;
  const required: PaymentRequiredV2 = {
    x402Version: 2,
    error: correction?.reason ?? offer.error,
    resource: { url: v1.resource, description: v1.description, mimeType: v1.mimeType },
    accepts: offer.accepts.map((accept) => ({
      scheme: accept.scheme,
      network: caip2,
      amount: offer.amount,
      asset: offer.asset,
      payTo: offer.pay_to,
      maxTimeoutSeconds: accept.maxTimeoutSeconds,
      extra:
        correction && accept.scheme === BATCH_SETTLEMENT_SCHEME
          ? ({
              ...accept.extra,
              channelState: correction.channelState,
              ...(correction.voucherState ? { voucherState: correction.voucherState } : {}),
            } satisfies Pick<BatchSettlementExtra, 'channelState' | 'voucherState'>)
          : accept.extra,
    })),
    extensions: { [PAYMENT_IDENTIFIER]: paymentIdentifierDeclaration(), ...extensions },
  };
  return encodeBase64Json(required);
}
