/*
 * Why a tool call did not do what was asked, as data: a stable machine-readable `code`, a
 * sentence for a person, and the facts behind it. The agent's refusals keep their fields (the
 * price, the limit, the server's x402 reason), so an assistant can act on them ("this page costs
 * 0.01, your limit is 0.005") without parsing prose.
 */

import {
  BudgetExceededError,
  InsecureConnectionError,
  PaymentFailedError,
  PaymentNotAllowedError,
  PriceTooHighError,
  SiteBudgetExceededError,
  UnsupportedPaymentError,
} from '@crawlgate/agent';
import { PrivateAddressError } from '@crawlgate/middleware/node';
import { PaidPageUnreadError, PaymentUnconfirmedError } from './payments-ledger';

export type RefusalCode =
  | 'price_too_high'
  | 'budget_exceeded'
  | 'network_not_allowed'
  | 'insecure_connection'
  | 'private_network'
  | 'payment_failed'
  | 'payment_unconfirmed'
  | 'paid_unread'
  | 'unsupported_payment'
  | 'invalid_url'
  | 'fetch_failed'
  | 'timeout'
  | 'no_price'
  | 'internal_error';

export interface Refusal {
  code: RefusalCode;
  message: string;
  [detail: string]: unknown;
}

/** A refusal raised by this server's own code. */
export class ToolError extends Error {
  override readonly name = 'ToolError';
  constructor(
    readonly code: RefusalCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** Any error a tool met, as a refusal; `url` is what the call was about. */
export function refusalOf(error: unknown, url?: string): Refusal {
  const at = url === undefined ? {} : { url };
  if (error instanceof PaymentUnconfirmedError) return unconfirmed(error, url);
  if (error instanceof PaidPageUnreadError) return paidUnread(error, url);
  if (error instanceof ToolError) return { code: error.code, message: error.message, ...at, ...error.details };
  if (error instanceof PriceTooHighError)
    return {
      code: 'price_too_high',
      message: error.message,
      url: error.url,
      price_usd: error.priceUsd,
      max_price_usd: error.maxPriceUsd,
    };
  if (error instanceof BudgetExceededError)
    return {
      code: 'budget_exceeded',
      message: error.message,
      url: error.url,
      price_usd: error.priceUsd,
      remaining_usd: error.remainingUsd,
      // What the site may still take (CRAWLGATE_MAX_SPEND_PER_SITE_USD), the rest of the budget kept for others.
      ...(error instanceof SiteBudgetExceededError ? { site: error.site } : {}),
    };
  if (error instanceof PaymentNotAllowedError)
    return { code: 'network_not_allowed', message: error.message, url: error.url, refused: error.refused };
  if (error instanceof InsecureConnectionError)
    return { code: 'insecure_connection', message: error.message, url: error.url };
  // The page, or a redirect on the way to it, is on this machine or its network: never reached, nothing paid.
  if (error instanceof PrivateAddressError)
    return {
      code: 'private_network',
      message: `${error.message}: this server reads pages on public addresses only (its operator can allow private networks with CRAWLGATE_ALLOW_PRIVATE_NETWORKS=true)`,
      ...at,
      host: error.host,
    };
  if (error instanceof PaymentFailedError)
    return { code: 'payment_failed', message: error.message, url: error.url, reason: error.reason };
  if (error instanceof UnsupportedPaymentError) return { code: 'unsupported_payment', message: error.message, ...at };
  // By name, not instanceof: fetch's errors and DOMExceptions may come from another realm (a test runner's, say).
  const name = (error as { name?: unknown } | null)?.name;
  if (name === 'TimeoutError' || name === 'AbortError')
    return { code: 'timeout', message: `${url ?? 'the request'} did not answer in time`, ...at };
  // fetch rejects with a TypeError for a network failure, its cause saying which (ECONNREFUSED, a DNS miss, …).
  if (name === 'TypeError') return { code: 'fetch_failed', message: describe(error as TypeError), ...at };
  return {
    code: 'internal_error',
    message: (error as { message?: unknown } | null)?.message?.toString() ?? String(error),
    ...at,
  };
}

/**
 * A fetch that failed after its payment left: the site holds a signed authorization it may still
 * settle, or no answer said whether it was taken. Not "nothing was paid": the assistant must not
 * take it for a refusal and pay again as if it cost nothing.
 */
function unconfirmed(error: PaymentUnconfirmedError, url: string | undefined): Refusal {
  const { payment } = error;
  const why = refusalOf(error.cause, url);
  const what = `a payment of ${payment.priceUsd} USD to ${payment.payTo} for ${payment.url}`;
  return {
    code: 'payment_unconfirmed',
    message:
      payment.status === 'held'
        ? `The site refused ${what}, but holds its signed authorization and could still settle it until it expires; it stays reserved from the budget until then (${why.message})`
        : `${what} was sent and no answer says whether it was taken; it counts as spent (${why.message})`,
    url: payment.url,
    payment_status: payment.status,
    reason: why.code === 'payment_failed' ? why.reason : why.code,
    price_usd: payment.priceUsd,
    amount: payment.amount,
    pay_to: payment.payTo,
    network: payment.network,
  };
}

function paidUnread(error: PaidPageUnreadError, url: string | undefined): Refusal {
  const { payment } = error;
  const why = refusalOf(error.cause, url);
  return {
    code: 'paid_unread',
    message: `The page was paid (${payment.priceUsd} USD), but could not be read: ${why.message}. The access token it bought is kept: fetching it again reads it without paying again while the token lives`,
    url: payment.url,
    reason: why.code === 'payment_failed' ? why.reason : why.code,
    price_usd: payment.priceUsd,
    amount: payment.amount,
    network: payment.network,
    tx_hash: payment.txHash,
  };
}

function describe(error: TypeError): string {
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  const why =
    typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : undefined;
  return why ? `${error.message}: ${why}` : error.message;
}
