import type { SitePayment } from './publisher-views';

/*
 * Answers of the agent endpoints (X-Wallet-Address), exactly as the API sends them (snake_case):
 * defined once, implemented by the API's views and read by @crawlgate/agent's profile() and
 * payments(). The address is a lookup key, not a credential: all of it is public on chain.
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

/** GET /v1/agents/me/payments (query: core's PageQuery): confirmed payments, newest first. */
export interface AgentPaymentPage {
  items: AgentPayment[];
  /** null on the last page. */
  next_cursor: string | null;
}
