import { parseRetryAfter } from '@crawlgate/core';
import { settlementOf, type Settlement } from './answers';

/*
 * What the answer to a paid retry with a batch-settlement voucher says of that voucher. Only the
 * gate's settlement header says it was charged (our middleware and x402's server send one with
 * every paid answer): a CDN, rate limiter or proxy in front of the gate answers 429 or 5xx
 * without one, before the voucher reached the gate or after the gate charged it.
 */

/** Seconds waited before a resend when the answer names none, and the most a Retry-After is followed. */
const DEFAULT_WAIT_SECONDS = 1;
const MAX_WAIT_SECONDS = 10;

/** How long to wait before sending again after `response`: its Retry-After (0 is at once), else a second; at most ten. */
export const waitBeforeResendMs = (response: Response): number =>
  Math.min(parseRetryAfter(response.headers.get('retry-after')) ?? DEFAULT_WAIT_SECONDS, MAX_WAIT_SECONDS) * 1000;

export type VoucherAnswer =
  /** The gate's settlement header says it took the voucher. */
  | { kind: 'charged'; settlement: Settlement }
  /** A 402 without the gate's word that it took the voucher, or a settlement header saying it failed: nothing was taken. */
  | { kind: 'refused'; settlement?: Settlement }
  /** Neither: the voucher may or may not have reached the gate. */
  | { kind: 'unconfirmed' };

export function voucherAnswerOf(response: Response): VoucherAnswer {
  const settlement = settlementOf(
    response.headers.get('payment-response') ?? response.headers.get('x-payment-response'),
  );
  // The gate's word wins over the status: a route may answer 402 itself after the gate took the
  // voucher (a paywall of the publisher's own), and the voucher is the site's to claim either way.
  if (settlement?.success === true) return { kind: 'charged', settlement };
  if (response.status === 402 || settlement?.success === false) return { kind: 'refused', settlement };
  return { kind: 'unconfirmed' };
}

/**
 * An answer to send the same voucher again for: nothing said of it, and a status that may be
 * different soon (the gate's 503 while a deposit settles, a proxy's 429 or 5xx). The gate answers
 * the same voucher for the same gate as it did the first time, so a resend never pays twice.
 */
export function awaitsResend(response: Response): boolean {
  return voucherAnswerOf(response).kind === 'unconfirmed' && (response.status === 429 || response.status >= 500);
}

/** send(), then the same request again (at most `maxResends` times, after its Retry-After) while its answer awaitsResend. */
export async function resendWhileUnconfirmed(
  send: () => Promise<Response>,
  maxResends: number,
  wait: (ms: number) => Promise<unknown> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): Promise<Response> {
  let response = await send();
  for (let resends = 0; awaitsResend(response) && resends < maxResends; resends++) {
    await response.body?.cancel().catch(() => undefined);
    await wait(waitBeforeResendMs(response));
    response = await send();
  }
  return response;
}
