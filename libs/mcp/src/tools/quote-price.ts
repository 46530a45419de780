import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { pageUrl } from '../page-url';
import { MAX_OFFERS_LISTED, quotePrice } from '../quote';
import type { WalletSession } from '../session';
import { answer } from '../tool-result';

const OFFER = z.object({
  x402_version: z.union([z.literal(1), z.literal(2)]).nullable(),
  network: z.string(),
  asset: z.string(),
  pay_to: z.string(),
  amount: z.string(),
  price_usd: z.string(),
});

export function registerQuotePrice(server: McpServer, session: WalletSession): void {
  server.registerTool(
    'quote_price',
    {
      title: "A page's price, without paying",
      description:
        "Says what fetch_page would pay for a URL, and whether that is within this server's limits (max price per page, budget left, " +
        'networks), without paying. source "page" (default) asks the page itself and reads its 402 (x402 v1 body or v2 PAYMENT-REQUIRED ' +
        'header), falling back to the site\'s /.well-known/pay.json when the 402 names no price; "pay.json" reads only the published price table.',
      inputSchema: {
        url: z.string().describe('Absolute http(s) URL of the page'),
        source: z
          .enum(['page', 'pay.json'])
          .optional()
          .describe('Where to read the price: "page" (default) or "pay.json"'),
      },
      outputSchema: {
        url: z.string().describe("The page that answered, after redirects: the price and payee are its site's"),
        source: z.enum(['page', 'pay.json']),
        status: z.number().int().nullable(),
        free: z.boolean(),
        price_usd: z.string(),
        pay_to: z.string().nullable().describe('Who fetch_page would pay; null when free'),
        offers: z.array(OFFER).describe(`The offers read, the one priced first; at most ${MAX_OFFERS_LISTED}`),
        offers_total: z.number().int(),
        within_max_price: z.boolean(),
        within_budget: z.boolean(),
        network_allowed: z.boolean(),
        max_price_usd: z.string(),
        remaining_usd: z.string(),
      },
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    ({ url, source }) =>
      answer(session, 'quote_price', url, async () => ({
        ...(await quotePrice(session, pageUrl(url), source ?? 'page')),
      })),
  );
}
