import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { PaymentEvent } from '@crawlgate/agent';
import { z } from 'zod';
import { BODY_READ_MS, readBodyText } from '../body-text';
import { pageUrl } from '../page-url';
import type { WalletSession } from '../session';
import { answer } from '../tool-result';

export interface FetchedPage {
  /** The page read, after redirects. */
  url: string;
  status: number;
  content_type: string | null;
  /** null for a binary body (not shown), or one that could not be read (body_error). */
  text: string | null;
  truncated: boolean;
  /** Why the body could not be read once the page answered: what `paid` says was paid stands. */
  body_error: string | null;
  /**
   * A payment this call made whose outcome no answer told (counted as spent), or that the site
   * refused but holds (reserved): the page answered without confirming it. null when none.
   */
  payment_unconfirmed: {
    price_usd: string;
    amount: string;
    network: string;
    pay_to: string;
    status: 'held' | 'unknown';
  } | null;
  /** What this call paid; null when it paid nothing (free, or read on a token paid before). */
  paid: {
    price_usd: string;
    amount: string;
    network: string;
    tx_hash: string | null;
    mode: PaymentEvent['mode'];
  } | null;
  spent_usd: string;
  remaining_usd: string;
}

/**
 * Reads a page, paying within the limits (and within `maxPriceUsd`, this call's own, when given);
 * a refusal is thrown (the agent's errors).
 */
export async function fetchPage(
  session: WalletSession,
  url: URL,
  maxChars: number,
  maxPriceUsd?: string,
  cancelled?: AbortSignal,
): Promise<FetchedPage> {
  const {
    value: response,
    payments,
    unconfirmed,
  } = await session.ledger.during(() =>
    // The call's signal: a call cancelled before its page asked for payment pays nothing (one that
    // left is followed through by the agent).
    session.agent.fetch(url, {
      headers: session.headers,
      signal: cancelled,
      ...(maxPriceUsd === undefined ? {} : { maxPriceUsd }),
    }),
  );
  // Read outside the payment's bookkeeping, but never reported as a refusal: once paid, a body
  // cut short (a connection dropped) is a paid page that failed to arrive, not "nothing paid".
  // The body within BODY_READ_MS, and no longer than the client waits (a cancelled call's answer is
  // dropped): the payment, if any, is over, so nothing of it is cut short.
  let body: { text: string | null; truncated: boolean; body_error: string | null };
  try {
    body = {
      ...(await readBodyText(response, maxChars, { signal: cancelled, timeoutMs: BODY_READ_MS })),
      body_error: null,
    };
  } catch (error) {
    if (payments.length === 0 && unconfirmed.length === 0) throw error;
    // Paid: answered (and logged) as a paid page whose body did not come, even to a client gone.
    const why = cancelled?.aborted
      ? 'the call was cancelled before the body came'
      : (error as Error).name === 'TimeoutError'
        ? (error as Error).message
        : `the body broke off: ${(error as Error).message}`;
    body = { text: null, truncated: true, body_error: why };
  }
  const payment = payments.at(-1);
  const doubt = unconfirmed.at(-1);
  const spent = session.agent.spent();
  return {
    url: response.url || url.href,
    status: response.status,
    content_type: response.headers.get('content-type'),
    ...body,
    payment_unconfirmed: doubt
      ? {
          price_usd: doubt.priceUsd,
          amount: doubt.amount,
          network: doubt.network,
          pay_to: doubt.payTo,
          status: doubt.status,
        }
      : null,
    paid: payment
      ? {
          price_usd: payment.priceUsd,
          amount: payment.amount,
          network: payment.network,
          tx_hash: payment.txHash,
          mode: payment.mode,
        }
      : null,
    spent_usd: spent.usd,
    remaining_usd: spent.remainingUsd,
  };
}

export function registerFetchPage(server: McpServer, session: WalletSession): void {
  server.registerTool(
    'fetch_page',
    {
      title: 'Fetch a page, paying for it if it asks',
      description:
        `Fetches a web page (GET) and returns its status, content type and text. If the site asks for payment (HTTP 402, x402 or Crawlgate), ` +
        `it is paid in USDC from the configured wallet, within limits: at most ${session.maxPriceUsd} USD for one page and ${session.budgetUsd} USD ` +
        `while this server runs. A page already paid is read again on its access token without paying. Refusals (price_too_high, ` +
        `budget_exceeded, network_not_allowed, payment_failed, private_network for a URL on a loopback or private address, …) come back ` +
        `as errors with a code; nothing is paid then. Except payment_unconfirmed: the payment left (price_usd to pay_to) and the site ` +
        `holds it or never said whether it took it; it counts against the budget (see spending). And paid_unread: the page was paid but ` +
        `could not be read (its token's read failed); fetched again it is read without paying again. A page paid whose body broke off ` +
        `comes back with paid set and body_error: do not call again expecting it free. ` +
        `Use quote_price first to see a price without paying.`,
      inputSchema: {
        url: z.string().describe('Absolute http(s) URL of the page'),
        max_chars: z
          .number()
          .int()
          .positive()
          .optional()
          .describe(`The most characters of text to return (default and upper bound: ${session.maxChars})`),
        max_price_usd: z
          .string()
          .regex(/^\d{1,7}(\.\d{1,6})?$/, 'a USD amount such as "0.002"')
          .optional()
          .describe(
            `The most this call may pay, in USD, e.g. the price quote_price gave: a lower limit than the configured ${session.maxPriceUsd} (a higher one changes nothing); above it, price_too_high and nothing is paid`,
          ),
      },
      outputSchema: {
        url: z.string(),
        status: z.number().int(),
        content_type: z.string().nullable(),
        text: z
          .string()
          .nullable()
          .describe('The body as text, up to max_chars; null when the body is binary (not shown)'),
        truncated: z.boolean(),
        body_error: z
          .string()
          .nullable()
          .describe('Why the body could not be read once the page answered; what paid says was paid stands'),
        payment_unconfirmed: z
          .object({
            price_usd: z.string(),
            amount: z.string(),
            network: z.string(),
            pay_to: z.string(),
            status: z.enum(['held', 'unknown']),
          })
          .nullable()
          .describe(
            'A payment this call made that the page answered without confirming: "unknown", no answer said whether it was taken (counted as spent); "held", the site refused it but holds the signed authorization. null when none',
          ),
        paid: z
          .object({
            price_usd: z.string(),
            amount: z.string(),
            network: z.string(),
            tx_hash: z.string().nullable(),
            mode: z.enum(['authorization', 'transfer', 'voucher']),
          })
          .nullable()
          .describe('What this call paid; null when it paid nothing'),
        spent_usd: z.string(),
        remaining_usd: z.string(),
      },
      // Paying cannot be undone: a host that asks before destructive calls should ask here.
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    },
    ({ url, max_chars, max_price_usd }, { signal }) =>
      answer(session, 'fetch_page', url, async () => ({
        ...(await fetchPage(
          session,
          pageUrl(url),
          Math.min(max_chars ?? session.maxChars, session.maxChars),
          max_price_usd,
          signal,
        )),
      })),
  );
}
