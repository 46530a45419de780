/*
 * Request and answer bodies of the publisher endpoints, exactly as the API sends them (snake_case):
 * defined once, implemented by the API's views and read by @crawlgate/publisher (which exports them
 * under these names) and the dashboard. Prices come back as minimal decimal strings ("0.005");
 * amounts as atomic USDC strings (6 decimals); timestamps as ISO 8601 strings; days as YYYY-MM-DD (UTC).
 */

/** A price in USD: a JSON number in 0..1, or a decimal string; at most 6 decimals. "0" is free. */
export type PriceUsd = number | string;

// Publishers

export interface RegisterInput {
  email: string;
  /** MIN_PASSWORD_LENGTH (8) to MAX_PASSWORD_LENGTH (256) characters. */
  password: string;
  name?: string;
}

export interface LoginInput {
  email: string;
  password: string;
}

/** The current password proves the change; the API key rotates with it. */
export interface ChangePasswordInput {
  current_password: string;
  /** MIN_PASSWORD_LENGTH (8) to MAX_PASSWORD_LENGTH (256) characters. */
  new_password: string;
}

export interface UpdatePublisherInput {
  name?: string | null;
  /** Needs the account password (sent as X-Confirm-Password). null clears it. */
  payout_address?: string | null;
  /**
   * The address's EIP-191 signature of payoutProofMessage(address, publisher_id): needed only to
   * name an address another publisher names already (the 409 says so, with the message to sign).
   */
  payout_proof?: string;
}

export interface Publisher {
  publisher_id: string;
  email: string;
  name: string | null;
  /** EIP-55 checksummed; null until set. */
  payout_address: string | null;
  /** Whether payout_address signed for this publisher (payout_proof); only then may others name it too. */
  payout_address_proven: boolean;
  created_at: string;
}

/** The key is shown only here; the API stores its hash. */
export interface RegisteredPublisher extends Publisher {
  api_key: string;
}

/** Returned by login, key rotation and a password change: the previous key stops working at once. */
export interface IssuedApiKey {
  publisher_id: string;
  api_key: string;
}

// Sites

export interface CreateSiteInput {
  /** A host name (optionally with :port), without scheme or path. */
  domain: string;
  name?: string;
}

export interface UpdateSiteInput {
  domain?: string;
  name?: string | null;
  /** Offer x402 batch-settlement beside exact (409 when the API has no claim authorizer). */
  batch_settlement?: boolean;
}

export interface Site {
  site_id: string;
  domain: string;
  name: string | null;
  default_price_usd: string;
  rules_count: number;
  /** Gates offer x402 batch-settlement (escrowed vouchers) beside exact. */
  batch_settlement: boolean;
  created_at: string;
  updated_at: string;
}

export interface SiteList {
  items: Site[];
}

/** site_token and access_token_secret are shown only here. */
export interface CreatedSite extends Site {
  site_token: string;
  /** HMAC key for local access-token verification (`cgsec_…`). */
  access_token_secret: string;
  /** Key id of the secret, carried in tokens as `kid`. */
  kid: string;
}

export interface DeletedSite {
  site_id: string;
  deleted: true;
}

/** The previous site token stops working at once. */
export interface RotatedSiteToken {
  site_id: string;
  site_token: string;
}

/** The previous secrets keep verifying until previous_valid_until. */
export interface SecretRotation {
  site_id: string;
  access_token_secret: string;
  kid: string;
  previous_kids: string[];
  previous_valid_until: string | null;
}

// Pricing

export interface PriceRuleInput {
  /** fnmatch glob: `*` one segment, `?` one character, `[...]` a class; `**` is rejected. */
  path: string;
  price_usd: PriceUsd;
}

export interface PricingInput {
  default_price_usd: PriceUsd;
  /** Ordered: the first matching rule sets the price. Replaces every existing rule. */
  rules?: PriceRuleInput[];
}

export interface PricingApplied {
  rules_applied: number;
}

/** A rule as the API returns it (the SDK calls it PriceRule; core's PriceRule is the compiled one). */
export interface PricingRule {
  path: string;
  price_usd: string;
}

export interface Pricing {
  site_id: string;
  default_price_usd: string;
  rules: PricingRule[];
  /** Increases with every change. */
  version: number;
  updated_at: string | null;
}

export interface PriceResolution {
  /** The path the rules were matched against (query removed, percent-decoded). */
  path: string;
  price_usd: string;
  /** Index of the winning rule; null when the default applied. */
  rule: number | null;
  pattern: string | null;
}

// Reporting

export interface StatsQuery {
  /** A date (YYYY-MM-DD), an ISO 8601 date-time or a Date, taken as its UTC day. Default: 29 days before `to`. */
  from?: string | Date;
  /** Included. Default: today (UTC). At most 366 days after `from`. */
  to?: string | Date;
}

export interface TopPath {
  url: string;
  paid_gates: number;
  revenue_usd: string;
}

export interface TopAgent {
  /** EIP-55 checksummed. */
  address: string;
  paid_gates: number;
  revenue_usd: string;
}

export interface StatsDay {
  day: string;
  revenue_usd: string;
  paid_gates: number;
  gates_created: number;
}

export interface SiteStats {
  site_id: string;
  from: string;
  to: string;
  revenue_usd: string;
  /** Atomic USDC units (6 decimals). */
  revenue_amount: string;
  paid_gates: number;
  gates_created: number;
  /** paid_gates / gates_created with 4 decimals; "0" when no gate was created. */
  conversion: string;
  unique_agents: number;
  top_paths: TopPath[];
  top_agents: TopAgent[];
  /** Every day of the range, oldest first, zeros included. */
  by_day: StatsDay[];
}

/** A path of one of the publisher's sites. */
export interface PublisherTopPath extends TopPath {
  site_id: string;
}

/** SiteStats over every site of a publisher, counted at once: exact top lists and distinct payers. */
export interface PublisherStats extends Omit<SiteStats, 'site_id' | 'top_paths'> {
  top_paths: PublisherTopPath[];
}

export interface PageQuery {
  /** 1 to MAX_PAGE_SIZE (100); default DEFAULT_PAGE_SIZE (20). */
  limit?: number;
  /** next_cursor of the previous page; omit for the newest page. */
  cursor?: string;
}

export interface SitePayment {
  payment_id: string;
  gate_id: string;
  site_id: string;
  /** The path the payment unlocked. */
  url: string;
  /** Atomic USDC units (6 decimals). */
  amount: string;
  price_usd: string;
  /** The settlement transaction (exact); null for a voucher, whose money moves when its channel is claimed. */
  tx_hash: string | null;
  /** How it was paid: one on-chain transfer (exact) or a voucher on an escrowed channel (batch-settlement). */
  scheme: PaymentScheme;
  /** The batch-settlement channel a voucher was drawn on; null for exact. */
  channel_id: string | null;
  /** local, base-sepolia, base, or eip155:<chain id>. */
  network: string;
  paid_at: string;
  /** The paying wallet, EIP-55 checksummed. */
  payer: string;
}

export type PaymentScheme = 'exact' | 'batch-settlement';

export interface SitePaymentPage {
  /** Newest first. */
  items: SitePayment[];
  /** null on the last page. */
  next_cursor: string | null;
}

/**
 * A site's x402 batch-settlement money (GET /v1/sites/{id}/channels): what its voucher payments
 * made, claimed on chain (swept to the payout address) or still in the payers' channels. A
 * channel's claims cover its vouchers in the order they were accepted.
 */
export interface SiteChannelsView {
  site_id: string;
  /** Atomic USDC units (6 decimals) of the site's voucher payments already claimed. */
  claimed_amount: string;
  claimed_usd: string;
  /** Accepted (the pages were served) and not yet claimed: still in the payers' escrowed channels. */
  unclaimed_amount: string;
  unclaimed_usd: string;
  /** Up to 100 channels with vouchers for this site, most recent voucher first. */
  channels: SiteChannelView[];
}

export interface SiteChannelView {
  channel_id: string;
  /** The paying wallet, EIP-55 checksummed. */
  payer: string;
  claimed_amount: string;
  unclaimed_amount: string;
  /** When this site last accepted a voucher on the channel. */
  last_voucher_at: string;
}
