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
      description:
        `The budget, what was spent of it, what is held and what is left (with a budget file, by every server on it), and what this server paid since it started, per page (the ${PAGES_LISTED} most recently paid). ` +
        'spent_usd counts payments whose fate is unknown (sent, no answer) as spent; held_usd is reserved: signed authorizations a site refused but can still settle until they expire, and payments under way.',
      outputSchema: {
        wallet: z.string(),
        spent_usd: z.string(),
        payments: z.number().int(),
        budget_usd: z.string(),
        held_usd: z.string(),
        remaining_usd: z.string(),
        max_price_usd: z.string(),
        pages: z.array(
          z.object({
            url: z.string(),
            spent_usd: z.string(),
            payments: z.number().int(),
            unconfirmed_usd: z
              .string()
              .describe('Sent with no answer saying whether it was taken (in spent_usd above)'),
            held_usd: z.string().describe('Refused, but the site holds a signed authorization for it'),
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
          held_usd: spent.reservedUsd,
          remaining_usd: spent.remainingUsd,
          max_price_usd: session.maxPriceUsd,
          pages,
          pages_total: total,
        };
      }),
  );
}
