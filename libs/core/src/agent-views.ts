import type { SitePayment } from './publisher-views';

/*
 * Answers of the agent endpoints (X-Wallet-Address), exactly as the API sends them (snake_case):
 * defined once, implemented by the API's views and read by @crawlgate/agent's profile() and
 * payments(). For the profile the address is a lookup key, not a credential: its totals are public
 * on chain. The history is not (paths, sites, gates, vouchers): it needs X-Wallet-Proof too
 * (wallet-proof.ts).
 */

/** GET /v1/agents/me: totals of the wallet's confirmed payments; zeros and nulls for a wallet that never paid. */
export interface AgentProfile {
  /** EIP-55 checksummed. */
  address: string;
  payments_count: number;
  total_spent_usd: string;
  /** Atomic USDC units (6 decimals). */
  total_spent_amount: string;
  first_payment_at: string | null;
  last_payment_at: string | null;
  /** Distinct sites paid. */
  sites_count: number;
}

/** One of the wallet's own payments: a site's payment item without the payer (the wallet asking). */
export type AgentPayment = Omit<SitePayment, 'payer'>;

/** GET /v1/agents/me/payments (query: core's PageQuery; X-Wallet-Proof required): confirmed payments, newest first. */
export interface AgentPaymentPage {
  items: AgentPayment[];
  /** null on the last page. */
  next_cursor: string | null;
}
