/*
 * /.well-known/pay.json, version 1: what a site behind @crawlgate/middleware charges bots and how
 * to pay, readable before any 402. The middleware writes it; agents (the MCP server's quotes) read
 * it. Fields are only ever added to version 1: a change that removes or retypes one is version 2.
 */

export interface PayJson {
  version: 1;
  site: { id: string; domain: string };
  currency: 'USD';
  /** The price of a path that no rule matches ("0": free). */
  default_price_usd: string;
  /** First match wins; `*` within one segment, `?` one character. */
  rules: { path: string; price_usd: string }[];
  /** Increases with every pricing change. */
  pricing_version: number;
  payment: {
    protocols: ['x402'];
    x402Version: [1, 2];
    scheme: 'exact';
    /** The x402 v1 name of the network. */
    network: string;
    caip2: string;
    chain_id: number;
    asset: string;
    asset_symbol: 'USDC';
    asset_decimals: 6;
    /** null: the publisher has no payout address yet, so nothing can be paid. */
    pay_to: string | null;
  };
  gate: {
    how_to: string;
    /** Request headers that carry an x402 payment: v1's, then v2's. */
    payment_headers: ['X-PAYMENT', 'PAYMENT-SIGNATURE'];
    /** Where to present the access token a payment returns. */
    token_headers: ['Authorization: Bearer', 'X-Crawlgate-Token'];
    token_ttl_seconds: number;
  };
  /** The Crawlgate API behind the gate (verify_url in each 402 body lives there). */
  api: string;
  /** Never charged, as globs (`**` spans segments). */
  free_paths: string[];
}
