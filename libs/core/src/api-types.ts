import type { PaymentRequirementsV1 } from './x402';

/*
 * Bodies the API sends and the middleware and SDKs read: defined once, so a change to the API's
 * answers is a compile error wherever they are read.
 */

/** The 402 body of POST /v1/gates (and GET /v1/gates/{id}): the gate, plus x402 v1's fields so middleware can forward it as is. */
export interface GateOffer {
  id: string;
  site_id: string;
  /** The path the payment unlocks, normalised (core's requestPath). */
  url: string;
  status: 'open' | 'settling' | 'paid' | 'expired';
  price_usd: string;
  /** Atomic USDC units (6 decimals), a decimal string. */
  amount: string;
  asset: string;
  network: string;
  chain_id: number;
  pay_to: string;
  expires_at: string;
  verify_url: string;
  x402Version: 1;
  error: string;
  accepts: PaymentRequirementsV1[];
}

/** 200 of POST /v1/gates/{id}/verify: settled on chain; the token opens `url` until `expires_at`. */
export interface PaidGate {
  status: 'paid';
  access_token: string;
  expires_at: string;
  gate_id: string;
  url: string;
  tx_hash: string;
  payer: string;
  /** Atomic USDC units. */
  amount: string;
  price_usd: string;
  network: string;
}

/** GET /v1/site: what a site's middleware publishes about itself (prices and how to pay). */
export interface SiteOffer {
  site_id: string;
  domain: string;
  default_price_usd: string;
  rules: { path: string; price_usd: string }[];
  pricing_version: number;
  network: string;
  caip2: string;
  chain_id: number;
  asset: string;
  /** Null until the publisher sets a payout address. */
  pay_to: string | null;
}
