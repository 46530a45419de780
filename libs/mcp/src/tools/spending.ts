import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { WalletSession } from '../session';
import { answer } from '../tool-result';

/** Pages listed by `spending`, newest first; `pages_total` counts them all. */
const PAGES_LISTED = 100;

export function registerSpending(server: McpServer, session: WalletSession): void {
  server.registerTool(
    'spending',
    {
      title: 'What has been spent',
      description: `The budget, what was spent of it and what is left (with a budget file, by every server on it), and what this server paid since it started, per page (the ${PAGES_LISTED} most recently paid).`,
      outputSchema: {
        wallet: z.string(),
        spent_usd: z.string(),
        payments: z.number().int(),
        budget_usd: z.string(),
        remaining_usd: z.string(),
        max_price_usd: z.string(),
        pages: z.array(
          z.object({
            url: z.string(),
            spent_usd: z.string(),
            payments: z.number().int(),
            last_paid_at: z.string(),
            last_tx_hash: z.string().nullable(),
          }),
        ),
        pages_total: z.number().int(),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    () =>
      answer(session, 'spending', undefined, async () => {
        // Read, not as last seen: other servers on a budget file spend too.
        const spent = await session.agent.spending();
        const { pages, total } = session.ledger.pages(PAGES_LISTED);
        return {
          wallet: session.address,
          spent_usd: spent.usd,
          payments: spent.payments,
          budget_usd: session.budgetUsd,
          remaining_usd: spent.remainingUsd,
          max_price_usd: session.maxPriceUsd,
          pages,
          pages_total: total,
        };
      }),
  );
}
