/*
 * Payments that left for a page whose outcome this agent never learned: an answer lost on the way
 * back, the gate's API failing or still settling. The payment may have opened the gate, whose API
 * answers for it again while it is remembered (a payment is settled and credited at most once), so
 * the next fetch of the page asks about it instead of paying a second time.
 */

import {
  ACCESS_TOKEN_TTL_SECONDS,
  DEFAULT_GATE_TTL_SECONDS,
  MAX_AUTHORIZATION_SECONDS,
  type Hex,
} from '@crawlgate/core';
import type { SentTransfer } from './payer';
import { domainOf, HELD_PAGE_MARGIN_MS, type HeldAuthorization } from './held-authorizations';
import type { Offer } from './offers';
import { TokenCache } from './token-cache';

/** A transfer sent for a page whose proof got no answer. */
export interface UnprovenTransfer {
  /** The offer it paid. */
  offer: Offer;
  verifyUrl: string;
  /** What is known of the transaction (its hash, its nonce); none when nothing of it was learned before it may have left. */
  sent?: SentTransfer;
  /** The body posted: `{tx_hash, signature, payer}`; none until the transfer was seen mined and the proof signed. */
  proof?: string;
  /** Epoch milliseconds: when it is no longer asked about (gateHoldUntil: past its gate's expiry, within bounds). */
  until: number;
}

/** A signed authorization sent for a page (its payment header) that neither bought a token nor was refused. */
export interface UnconfirmedAuthorization {
  /** The offer it paid. */
  offer: Offer;
  /** The offer's verify_url: the gate's API answers for the payment there. None: a plain x402 site, which nothing can be asked of. */
  verifyUrl?: string;
  header: [name: string, value: string];
  /** Epoch milliseconds: when it was first sent (Receipt.sentAt). */
  sentAt: number;
  /**
   * Epoch milliseconds: when it is let go unasked: for a Crawlgate gate's, when a token it bought
   * would have expired (validBefore plus the life its site's tokens were seen to have then); for a
   * plain x402 site's a minute past validBefore, when it is final.
   */
  until: number;
  /**
   * Epoch milliseconds: the last moment its settlement could issue a token (its validBefore), from
   * which a token of its site's life may open the page: a life learned since it was sent keeps it
   * that much longer. Only for a Crawlgate gate's payment (a verify_url, or a gate named): a plain
   * x402 site's answer buys no token.
   */
  tokenFrom?: number;
  /**
   * Its verify_url refused it: counted against the limits until a minute past its validBefore; its
   * page waits that long only for an agent that cannot read the chain, and otherwise until the chain
   * shows it unused, or as long as a token could live (a front can stand in for verify_url).
   */
  refused?: boolean;
  /** Watched on the chain until it is over (heldAuthorizations), which gives its price back if it was never used. */
  watched?: HeldAuthorization;
}

/**
 * Whether a voucher for `total` was surely never charged, the gate having charged this channel's
 * voucher for `charged`, a page of `price`: it took that one on a channel at `charged - price`,
 * below `total`, and never takes a total at or below what the channel holds. The agent's own record
 * of what it signed and was answered, not a site's claim of what it holds.
 */
export function neverCharged(total: bigint, charged: bigint, price: bigint): boolean {
  return total > charged - price && total <= charged;
}

/**
 * The shortest a payment held in doubt until its gate is over is kept, whatever the site says of
 * that gate (a gate already expired, a timeout of a second): a gate's default life.
 */
export const MIN_GATE_HOLD_MS = DEFAULT_GATE_TTL_SECONDS * 1000;
/**
 * The longest, whatever the site says: as long as an authorization is held (its life and its
 * token's). A site naming gates that live a day would otherwise fill the agent's room for payments
 * in doubt (MAX_PAYMENTS_IN_DOUBT, over many host names) and stop its payments to every site for a day.
 */
export const MAX_GATE_HOLD_MS = (MAX_AUTHORIZATION_SECONDS + ACCESS_TOKEN_TTL_SECONDS) * 1000;

/**
 * Until when a payment is held in doubt for its gate, which expires at `gateExp` as the gate id
 * says (epoch seconds; undefined when the site names none): past it, with a margin for clocks,
 * within [MIN_GATE_HOLD_MS, MAX_GATE_HOLD_MS] of now. The id's expiry is the site's word, never a
 * reason to let go sooner.
 */
export function gateHoldUntil(gateExp: number | undefined, now = Date.now()): number {
  const named = gateExp === undefined ? 0 : gateExp * 1000 + HELD_PAGE_MARGIN_MS;
  return Math.max(now + MIN_GATE_HOLD_MS, Math.min(named, now + MAX_GATE_HOLD_MS));
}

/**
 * A voucher sent for a page whose answer was lost (a front's errors to every resend, a dropped
 * connection): the gate may have charged it. Sent again first on the next fetch of the page, the
 * gate answers it as it did while the gate lives; a new voucher would meet the gate's correction
 * saying this one was charged, and pay the page a second time.
 */
export interface LostVoucher {
  /** The terms of the channel it was signed on (ChannelBook.key: its turn), and that channel (a withdrawn one is replaced on the same terms). */
  channelKey: string;
  channelId: Hex;
  total: bigint;
  /** The PAYMENT-SIGNATURE sent. */
  header: string;
  /** Epoch milliseconds: when it was first sent (Receipt.sentAt). */
  sentAt: number;
  /** The offer it paid (reported with onPayment once the gate says it was charged). */
  offer: Offer;
  /** Epoch milliseconds: when it is let go (gateHoldUntil: past its gate's expiry, within bounds). */
  until: number;
  /**
   * Epoch milliseconds: when a token it bought would have expired, from the last moment its gate
   * could take it (until, plus the life its site's tokens were seen to have when it was sent; a
   * longer one learned since counts too): no refusal nor token a front may forge lets its page be
   * paid anew sooner, nor a receipt it leaves end sooner. Counted against the limits only until
   * `until`: past it, with the store full, it may be let go for room (PaymentsInDoubt.roomFor).
   */
  over: number;
  /** A correction said the channel was charged exactly its total: refused past its hold, it is not paid again. */
  claimedCharged?: boolean;
}

/**
 * Pages remembered at most, and of one host. None still in doubt is ever dropped to make room
 * (its page would be paid again): full of them, the agent pays no new page (of that host, or at
 * all) until some are over (roomFor). Per host first: a site answering every payment with a
 * failure holds off payments to itself, not to the others.
 */
export const MAX_PAYMENTS_IN_DOUBT = 1_000;
export const MAX_PAYMENTS_IN_DOUBT_PER_HOST = 20;
/** Of one domain (domainOf): a site on many host names of its domain (wildcard DNS costs nothing) holds off no other. */
export const MAX_PAYMENTS_IN_DOUBT_PER_DOMAIN = 40;

/** What roomFor() found full: one host, one domain, or the whole store. */
export type FullRoom = 'host' | 'domain' | 'all';

/** How many `what` (payments, vouchers) a full room holds, and of what, for an error's message. */
export function fullRoomText(room: FullRoom, what: string, url: string): string {
  const { hostname } = new URL(url);
  if (room === 'host') return `${MAX_PAYMENTS_IN_DOUBT_PER_HOST} ${what} to ${hostname} (any port or scheme)`;
  if (room === 'domain') return `${MAX_PAYMENTS_IN_DOUBT_PER_DOMAIN} ${what} to host names of ${domainOf(hostname)}`;
  return `${MAX_PAYMENTS_IN_DOUBT} ${what}`;
}

export class PaymentsInDoubt<Payment extends { until: number }> {
  private readonly byPage = new Map<string, Payment>();

  /**
   * `keepPastUntil`: a payment past its end stays, given back by get() (its gate may still answer
   * for it), until its page is asked about again or its room is needed; it no longer counts against
   * the limits. Otherwise it is dropped then. `endOf`: a payment's end as its owner reads it now (a
   * life of its site's tokens learned since it was kept may hold its page longer); its `until` by default.
   */
  constructor(
    private readonly keepPastUntil = false,
    private readonly endOf: (page: string, payment: Payment) => number = (_page, payment) => payment.until,
  ) {}

  /**
   * Whether one more payment for `page` (a TokenCache key) may be kept: 'host' when its host
   * holds too many, 'domain' when its domain does, 'all' when all hosts do. Those past their end
   * are dropped to make room.
   */
  roomFor(page: string, now = Date.now()): 'yes' | FullRoom {
    // By host, whatever the scheme and port: one host on many ports is one site.
    const host = TokenCache.hostOf(page);
    const domain = domainOf(host);
    let ofHost = 0;
    let ofDomain = 0;
    let live = 0;
    const full = this.byPage.size >= MAX_PAYMENTS_IN_DOUBT;
    for (const [kept, payment] of this.byPage) {
      if (!(now < this.endOf(kept, payment))) {
        if (!this.keepPastUntil || full) this.byPage.delete(kept);
        continue;
      }
      live++;
      const keptHost = TokenCache.hostOf(kept);
      if (keptHost === host) ofHost++;
      if (domainOf(keptHost) === domain) ofDomain++;
    }
    if (ofHost >= MAX_PAYMENTS_IN_DOUBT_PER_HOST) return 'host';
    if (ofDomain >= MAX_PAYMENTS_IN_DOUBT_PER_DOMAIN) return 'domain';
    return live < MAX_PAYMENTS_IN_DOUBT ? 'yes' : 'all';
  }

  keep(page: string, payment: Payment): void {
    this.byPage.delete(page);
    this.byPage.set(page, payment);
  }

  /** The page's payment still worth asking about, if any; one past its end is dropped (unless kept past it). */
  get(page: string, now = Date.now()): Payment | undefined {
    const payment = this.byPage.get(page);
    if (!payment || this.keepPastUntil || now < this.endOf(page, payment)) return payment;
    this.byPage.delete(page);
    return undefined;
  }

  forget(page: string): void {
    this.byPage.delete(page);
  }

  /** Visits every page's payment (which `visit` may update). */
  forEach(visit: (page: string, payment: Payment) => void): void {
    for (const [page, payment] of this.byPage) visit(page, payment);
  }

  /** Whether any page's payment `matches`. */
  some(matches: (page: string, payment: Payment) => boolean): boolean {
    for (const [page, payment] of this.byPage) if (matches(page, payment)) return true;
    return false;
  }

  /** Forgets every page whose payment `matches`. */
  forgetWhere(matches: (page: string, payment: Payment) => boolean): void {
    for (const [page, payment] of this.byPage) if (matches(page, payment)) this.byPage.delete(page);
  }
}

/** A verify answer that says nothing of the payment yet: still settling (202), a limit, a timeout, a failure. */
export function isUnanswered(status: number): boolean {
  return status === 202 || status === 408 || status === 429 || status >= 500;
}

/**
 * Whether a site's 503 to a payment says it took nothing (the middleware's GateNotCharging: its
 * gate busy or not loaded). Any other 503 (the middleware's "pending", a load balancer's error
 * page that replaced the paid answer) may follow a settlement.
 */
export function tookNothing(body: unknown): boolean {
  return (body as { charged?: unknown } | null | undefined)?.charged === false;
}

/**
 * The verify_url a site's "pending" answer names (the gate that took the payment: a v1 payment names
 * none, and the site pays it through a gate of its own) when it is a gate of the same API as the
 * `offered` one; otherwise `offered`. A site cannot send the agent's questions anywhere else.
 */
export function gateOfPendingAnswer(body: unknown, offered: string): string {
  const named = (body as { verify_url?: unknown } | null | undefined)?.verify_url;
  if (typeof named !== 'string') return offered;
  let url: URL;
  try {
    url = new URL(named);
  } catch {
    return offered;
  }
  const before = new URL(offered);
  const gates = (path: string) => /^(.*\/gates)\/[^/]+\/verify$/.exec(path)?.[1];
  const sameApi =
    url.origin === before.origin &&
    url.search === '' &&
    url.hash === '' &&
    gates(url.pathname) !== undefined &&
    gates(url.pathname) === gates(before.pathname);
  return sameApi ? url.href : offered;
}
