/*
 * /.well-known/pay.json: what a site charges bots and how to pay, readable before any 402 (the
 * path itself is always free). Version 1 of the document; fields are only ever added to it: a
 * change that removes or retypes one is version 2.
 *
 *   version            1
 *   site               { id, domain }
 *   currency           "USD": every price below is a decimal string of US dollars
 *   default_price_usd  the price of a path that no rule matches ("0": free)
 *   rules              [{ path, price_usd }], first match wins; `*` within one segment, `?` one character
 *   pricing_version    increases with every pricing change
 *   payment            how to pay: x402 "exact" in USDC on `network` (x402 v1 name) / `caip2` (v2) to `pay_to`
 *                      (null: the publisher has no payout address yet, so nothing can be paid)
 *   gate               how the gate answers: how_to (prose), the headers to pay with and to present a token in
 *   api                the Crawlgate API's public base URL (verify_url in each 402 body lives there); never
 *                      the gate's own apiUrl, which may be an internal address or carry credentials
 *   free_paths         never charged, as globs (`*` within one path segment)
 */

import { ACCESS_TOKEN_TTL_SECONDS, transferProofMessage } from '@crawlgate/core';
import { ALWAYS_FREE_PATHS } from './bots/free-paths';
import type { PayJson, SiteOffer } from '@crawlgate/core';

/** The document's type is core's (PayJson), so the agent and MCP read what this builds. */
export type { PayJson };

const HOW_TO =
  'Request the page. A bot that has not paid gets HTTP 402 with the price and x402 payment requirements ' +
  '(in the body and, base64, in the PAYMENT-REQUIRED header; the crawler-price header repeats the price). ' +
  'Pay by sending the same request again with an X-PAYMENT (x402 v1) or PAYMENT-SIGNATURE (x402 v2) header ' +
  "signing a USDC transferWithAuthorization to pay_to, or POST the payment to the 402 body's verify_url, or a USDC " +
  "transfer's tx_hash with signature, the payer's EIP-191 signature of the transfer proof " +
  `${JSON.stringify(transferProofMessage('<gate ref>', '<tx_hash>'))}. The paid response carries X-Crawlgate-Token: send it again as ` +
  '"Authorization: Bearer <token>" or X-Crawlgate-Token to read the same path until it expires. If the answer to a paid ' +
  'request is lost, POST the same payment to the verify_url of the 402 it paid: an x402 v1 X-PAYMENT sent again with a new ' +
  'request meets a new gate, where it is refused as spent (an x402 v2 PAYMENT-SIGNATURE names its gate and may be sent again).';

/** The pay.json document of a site, from its offer; `licensePath`: where the gate serves the RSL license (free), if it does. */
export function buildPayJson(site: SiteOffer, licensePath?: string): PayJson {
  return {
    version: 1,
    site: { id: site.site_id, domain: site.domain },
    currency: 'USD',
    default_price_usd: site.default_price_usd,
    rules: site.rules.map(({ path, price_usd }) => ({ path, price_usd })),
    pricing_version: site.pricing_version,
    payment: {
      protocols: ['x402'],
      x402Version: [1, 2],
      scheme: 'exact',
      network: site.network,
      caip2: site.caip2,
      chain_id: site.chain_id,
      asset: site.asset,
      asset_symbol: 'USDC',
      asset_decimals: 6,
      pay_to: site.pay_to,
    },
    gate: {
      how_to: HOW_TO,
      payment_headers: ['X-PAYMENT', 'PAYMENT-SIGNATURE'],
      token_headers: ['Authorization: Bearer', 'X-Crawlgate-Token'],
      token_ttl_seconds: site.access_token_ttl_seconds ?? ACCESS_TOKEN_TTL_SECONDS,
    },
    api: site.api_base_url.replace(/\/+$/, ''),
    free_paths: licensePath ? [...ALWAYS_FREE_PATHS, licensePath] : [...ALWAYS_FREE_PATHS],
  };
}
