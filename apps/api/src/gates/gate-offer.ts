import { encodeBase64Json, formatMicrosUsd, type GateOffer, type PaymentRequiredV2 } from '@crawlgate/core';

export type { GateOffer };
import type { ChainContext } from '../chain/chain-context';
import type { Gate } from '../generated/prisma/client';

/** Authorizations may be valid for at most this long, and never past the gate's expiry. */
const MAX_AUTHORIZATION_SECONDS = 300;


/** The 402 body: our gate fields plus x402 v1's, so middleware can forward it unchanged. */
export function gateOffer(gate: Gate, chain: ChainContext, baseUrl: string, description: string, now = Date.now()): GateOffer {
  const amount = gate.priceMicros.toString();
  return {
    id: gate.id,
    site_id: gate.siteId,
    url: gate.url,
    status: gate.status,
    price_usd: formatMicrosUsd(gate.priceMicros),
    amount,
    asset: gate.asset,
    network: chain.network.name,
    chain_id: gate.chainId,
    pay_to: gate.payTo,
    expires_at: gate.expiresAt.toISOString(),
    verify_url: `${baseUrl}/v1/gates/${gate.id}/verify`,
    x402Version: 1,
    error: 'Payment required: send an X-PAYMENT header, or POST the payment to verify_url',
    accepts: [
      {
        scheme: 'exact',
        network: chain.network.x402Network,
        maxAmountRequired: amount,
        resource: gate.resource,
        description,
        mimeType: '',
        payTo: gate.payTo,
        maxTimeoutSeconds: maxTimeoutSeconds(gate, now),
        asset: gate.asset,
        extra: { name: chain.usdcName, version: chain.usdcVersion, gate_id: gate.id },
      },
    ],
  };
}

/** x402 v2's form of the same requirements, base64 JSON for the PAYMENT-REQUIRED header. */
export function paymentRequiredHeader(offer: GateOffer, chain: ChainContext): string {
  const [v1] = offer.accepts;
  const required: PaymentRequiredV2 = {
    x402Version: 2,
    error: offer.error,
    resource: { url: v1.resource, description: v1.description, mimeType: v1.mimeType },
    accepts: [
      {
        scheme: 'exact',
        network: chain.network.caip2,
        amount: offer.amount,
        asset: offer.asset,
        payTo: offer.pay_to,
        maxTimeoutSeconds: v1.maxTimeoutSeconds,
        extra: v1.extra,
      },
    ],
  };
  return encodeBase64Json(required);
}

function maxTimeoutSeconds(gate: Gate, now: number): number {
  const remaining = Math.floor((gate.expiresAt.getTime() - now) / 1000);
  return Math.max(1, Math.min(MAX_AUTHORIZATION_SECONDS, remaining));
}
