/*
 * What a page's payment was, once taken as bought: its header, sent again when the token it bought
 * is refused or never came. A front between the agent and an honest gate can drop or forge the
 * token; the gate answers its own payment sent again idempotently (the API settles it at most once,
 * a voucher for its gate is answered as it was), where a new payment would pay the page twice.
 */

import {
  ACCESS_TOKEN_TTL_SECONDS,
  MAX_ACCESS_TOKEN_TTL_SECONDS,
  MIN_ACCESS_TOKEN_TTL_SECONDS,
  peekAccessTokenPayload,
} from '@crawlgate/core';
import { KeptByPage } from './kept-by-page';
import type { PaidAt } from './token-cache';

/** A payment taken as bought for a page. */
export interface Receipt {
  /** The payment header sent: the same one is sent again. */
  header: [name: string, value: string];
  /** Where it went: the answers to it are read for its gate's settlement or token. */
  paidAt: PaidAt;
  /** Epoch milliseconds: when the payment was first sent; no token it bought was issued before. */
  sentAt: number;
  /**
   * Epoch milliseconds: when the token it bought expires (or would have). Past it, a resend the gate
   * does not take has the page paid anew; the receipt is kept (and sent once more) until the longest
   * a token lives from its send, or its notBefore if later, since a front may have forged the life
   * it was read from.
   */
  until: number;
  /**
   * Epoch milliseconds: the soonest it may end whatever a token says, for a lost voucher's
   * (LostVoucher.over): its token came from a verify_url or a resend a front may answer for its gate.
   */
  notBefore?: number;
  /**
   * Epoch milliseconds, for one kept with no token: the last moment a token it bought could have
   * been issued (an exact authorization's validBefore: a front holding it, answering a settlement
   * of its own, can have its gate settle it late), from which its site's token life is counted
   * when no token comes of it.
   */
  lastIssue?: number;
}

/**
 * Receipts kept at most, as many as tokens (TokenCache): a full store drops those past their last
 * use, then its oldest (a site's paid pages are what push another's out: no one is paid for free).
 */
export const MAX_RECEIPTS = 10_000;

/**
 * When a receipt for a payment first sent at `sentAt` (epoch milliseconds) that bought `token` (if
 * any came) ends: when the token expires (its exp), and no sooner than as long after the send as it
 * lives (exp less iat: an agent clock ahead of the API's), within the shortest and the longest life
 * the API gives a token from the send (MIN_ and MAX_ACCESS_TOKEN_TTL_SECONDS). Counted from the
 * send, not from when the token came: a lost answer's token asked for 20 minutes later ends 30
 * minutes after the payment. A token issued late (a settlement the API confirmed after its wait)
 * lives on past send + life, and so does its receipt: ended sooner, a front dropping the token once
 * would have the page paid again while it opens it. An agent clock behind the API's keeps a receipt
 * that long past its token (the page refused for the skew, never paid twice). The agent cannot check
 * the token's signature: a life a front forged short ends it no sooner than a gate issuing the
 * shortest tokens would, and past it the payment is sent once more before the page is paid anew
 * (Receipt.until). With no readable token, a token's default life (ACCESS_TOKEN_TTL_SECONDS).
 */
export function receiptUntil(token: string | undefined, sentAt: number): number {
  const payload = token ? peekAccessTokenPayload(token) : null;
  if (!payload) return sentAt + ACCESS_TOKEN_TTL_SECONDS * 1000;
  const until = Math.max(payload.exp * 1000, sentAt + (payload.exp - payload.iat) * 1000);
  return Math.min(
    Math.max(until, sentAt + MIN_ACCESS_TOKEN_TTL_SECONDS * 1000),
    sentAt + MAX_ACCESS_TOKEN_TTL_SECONDS * 1000,
  );
}

/**
 * The longest a token its payment bought could live (from its lastIssue when kept with no token),
 * or its notBefore if later (a lost voucher its gate could take late): past it, a receipt is of no use.
 */
const lastUse = (receipt: Receipt) =>
  Math.max(
    Math.max(receipt.sentAt, receipt.lastIssue ?? 0) + MAX_ACCESS_TOKEN_TTL_SECONDS * 1000,
    receipt.notBefore ?? 0,
  );

/** Receipts by page (TokenCache.key), in memory, bounded: a full store drops those past their last use, then its oldest. */
export class Receipts extends KeptByPage<Receipt> {
  constructor(maxReceipts = MAX_RECEIPTS) {
    super(lastUse, maxReceipts);
  }
}
