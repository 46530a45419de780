import type { BotPolicyOffer } from './bot-policy';
import type { ChannelStateView, VoucherStateView } from './batch-settlement';
import type { CrawlerCount, CrawlerPathCount } from './crawler-report';
import type { PaymentRequirementsV1 } from './x402';

/*
 * Bodies the API sends and the middleware and SDKs read: defined once, so a change to the API's
 * answers is a compile error wherever they are read.
 */

/** The 402 body of POST /v1/gates (and GET /v1/gates/{id}): the gate, plus x402 v1's fields so middleware can forward it as is. */
export interface GateOffer {
  /** The signed offer (core's signGate): what verify_url and GET /v1/gates/{id} take. */
  id: string;
  /** The gate's name in payments, access tokens and histories. */
  ref: string;
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
  /** Present when a batch-settlement voucher paid: the charge and the channel as x402's PAYMENT-RESPONSE states them. */
  batch_settlement?: VoucherPaid;
}

/** What a voucher payment tells the payer (x402's `extra.chargedAmount` / `extra.channelState`, and the deposit if one ran). */
export interface VoucherPaid {
  channel_id: string;
  /** Atomic units this gate charged to the channel. */
  charged_amount: string;
  /** x402's channelState, field names as x402 spells them. */
  channel_state: ChannelStateView;
  /** The deposit this payment carried, once on chain; null for a voucher alone. */
  deposit_tx_hash: string | null;
  deposit_amount: string | null;
}

/**
 * 200 of POST /v1/gates/{id}/verify for x402's batch-settlement refund payload: what the channel
 * had not been charged went back to the payer, in `refund_tx_hash` (which first claimed what it had
 * been charged). It pays nothing: the gate stays unpaid and no token is issued.
 */
export interface RefundedChannel {
  status: 'refunded';
  gate_id: string;
  channel_id: string;
  payer: string;
  /** Atomic units returned to the payer, as the escrow's Refunded event states them. */
  refund_amount: string;
  refund_tx_hash: string;
  network: string;
  /** x402's channelState after the refund. */
  channel_state: ChannelStateView;
}

/**
 * The body of POST /v1/gates/{id}/verify: one proof. `payment`:
 * the decoded X-PAYMENT (x402 v1) or PAYMENT-SIGNATURE (v2) object; or `tx_hash` of a USDC transfer
 * already sent, with `signature`, the payer's EIP-191 signature of core's transferProofMessage.
 */
export interface VerifyPaymentRequest {
  payment?: Record<string, unknown>;
  tx_hash?: string;
  signature?: string;
  /** With tx_hash: the transfer's payer, so a contract wallet's transfer is found in any bundle. */
  payer?: string;
  /**
   * Answer only for a payment of this gate already recorded with this `payment` (an EIP-3009
   * authorization paid, pending or failed; a batch-settlement voucher taken), never settle or take a
   * new one, nor a refund (402 `invalid_payload`). The middleware asks so for a gate offered below
   * the route's price now: its payer may have paid it before the price rose (and its answer been
   * lost), and nobody may start paying it at the old price.
   */
  recorded_only?: boolean;
}

/** 402 of POST /v1/gates/{id}/verify: the proof does not pay this gate; nothing was charged. */
export interface PaymentRejection {
  detail: string;
  /** An x402 reason code (X402_REASONS, BATCH_REASONS), or one of the tx-hash path's. */
  reason: string;
  /** Set in x402's corrective 402 (VoucherCorrection). */
  channel_state?: ChannelStateView;
  voucher_state?: VoucherStateView;
}

/** 402 of POST /v1/gates/{id}/verify when a voucher's running total is not the server's: x402's corrective 402. */
export interface VoucherCorrection extends PaymentRejection {
  channel_state: ChannelStateView;
  /** The last voucher the server holds for the channel; absent when it holds none (the chain's totalClaimed is the base). */
  voucher_state?: VoucherStateView;
}

/**
 * The middleware's 503 that took nothing (its gate busy or not loaded, the site without a payout
 * address): `charged: false` tells a payer that a payment it sent was not sent on. Any other 503 to
 * a payment (a load balancer's, the middleware's "settlement pending") may follow its settlement.
 */
export interface GateNotCharging {
  detail: string;
  charged: false;
}

/** 202 of POST /v1/gates/{id}/verify: sent to the chain, not confirmed yet; the same proof for the same gate again gets the final answer. */
export interface PendingPayment {
  status: 'settlement_pending';
  gate_id: string;
  tx_hash: string | null;
  detail: string;
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
  /** The x402 v1 name of the network. */
  x402_network: string;
  /** The asset's EIP-712 domain, as x402 `extra` carries it. */
  asset_name: string;
  asset_version: string;
  /** Null until the publisher sets a payout address. */
  pay_to: string | null;
  /** How long a gate the middleware mints stays payable. */
  gate_ttl_seconds: number;
  /** How long a paid access token opens its path (the API's ACCESS_TOKEN_TTL_SECONDS); absent from APIs that do not say. */
  access_token_ttl_seconds?: number;
  /** How long the API waits for a settlement before answering "pending": the middleware's verify waits a little longer. */
  settlement_timeout_seconds: number;
  /** The longest URL a gate is opened for. */
  max_url_length: number;
  /** The API's public base URL: verify_url of every gate is under it. */
  api_base_url: string;
  /** Set when the site takes x402 batch-settlement vouchers: the channel terms every gate offers; null or absent otherwise. */
  batch_settlement?: BatchSettlementOffer | null;
  /** The site's stored bot policy (bot-policy.ts); absent from APIs that store none. */
  bot_policy?: BotPolicyOffer;
  /**
   * Each access-token secret that verifies now, the current one first: a gate signs and verifies
   * only with the configured secrets listed, and mints no gate that outlives its secret. Absent
   * from APIs that list none.
   */
  usable_secrets?: UsableSecretView[];
}

/** An access-token secret as GET /v1/site names it: never the secret itself. */
export interface UsableSecretView {
  /** secretFingerprint() of the secret. */
  fingerprint: string;
  /** When it stops verifying (ISO 8601); null for the current secret. */
  retires_at: string | null;
}

/** A site's batch-settlement terms, as GET /v1/site states them. */
export interface BatchSettlementOffer {
  escrow: string;
  receiver_authorizer: string;
  withdraw_delay_seconds: number;
}

/** POST /v1/site/gate-counts: the 402s a middleware answered, per UTC day, since its last report. */
/** The middleware's batched report (POST /v1/site/gate-counts): gates offered, and what it did per crawler. */
export interface GateCountsReport {
  counts: { day: string; gates: number }[];
  crawlers?: CrawlerCount[];
  paths?: CrawlerPathCount[];
}
