import { decodeBase64Json, USDC_ABI } from '@crawlgate/core';
import type { Hex, PublicClient } from 'viem';
import type { Budget } from './budget';
import type { KeptByPage } from './kept-by-page';
import type { Reservation } from './budget-store';
import type { Offer } from './offers';
import { TokenCache } from './token-cache';

/** A refused authorization the site still holds (or one whose answer never came), and the budget reserved for it. */
export interface HeldAuthorization {
  /** None for a payment already counted as spent (an exact payment whose answer never came): onFreed gives its price back. */
  reservation?: Reservation;
  chainId: number;
  asset: Hex;
  from: Hex;
  nonce: Hex;
  validBefore: bigint;
  /** Called once the chain showed it was never made (its reservation freed). */
  onFreed?: () => void | Promise<void>;
}

/** What settling the held authorizations did: freed (expired unused) and spent (a site settled one after refusing it). */
export interface HeldOutcome {
  /** Found unused: each reservation freed, each payment whose answer was lost given its price back. */
  freed: number;
  /**
   * Found used on chain: each refused authorization's reservation now counts as spent (one payment
   * more); a payment whose answer was lost was counted as spent when sent, and stays so.
   */
  spent: number;
}

/** How far past validBefore the chain's newest block must be: no reorg reaches back that far in time. */
const REORG_MARGIN_SECONDS = 60n;
/** Seconds after validBefore and the margin (by this machine's clock) before the chain is asked; then again at this interval. */
const CHECK_DELAY_SECONDS = 15;
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The EIP-3009 authorization inside an exact payment header this agent made (x402 v1 or v2). */
export function authorizationOfHeader(value: string): Pick<HeldAuthorization, 'from' | 'nonce' | 'validBefore'> | null {
  const payment = decodeBase64Json(value) as { payload?: { authorization?: Record<string, unknown> } } | null;
  const authorization = payment?.payload?.authorization;
  const { from, nonce, validBefore } = authorization ?? {};
  if (typeof from !== 'string' || typeof nonce !== 'string' || typeof validBefore !== 'string') return null;
  if (!/^\d{1,20}$/.test(validBefore)) return null;
  return { from: from as Hex, nonce: nonce as Hex, validBefore: BigInt(validBefore) };
}

type Authorization = Pick<HeldAuthorization, 'chainId' | 'asset' | 'from' | 'nonce' | 'validBefore'>;

/** Whether the token took the authorization, as of `blockNumber`. */
function usedAt(client: PublicClient, one: Authorization, blockNumber: bigint): Promise<boolean> {
  return client.readContract({
    address: one.asset,
    abi: USDC_ABI,
    functionName: 'authorizationState',
    args: [one.from, one.nonce],
    blockNumber,
  });
}

/**
 * How far behind this machine's clock a chain's newest block may be while the chain is taken to
 * be moving: a chain further behind (an idle local chain mines only on demand) is 'stale'.
 */
const STALE_CHAIN_MS = 120_000;

/**
 * What became of an authorization, once final: the chain's newest block is REORG_MARGIN_SECONDS
 * past its validBefore. Before then 'pending', or 'stale' when that block is older than
 * STALE_CHAIN_MS by `now`; 'other-chain' when it is not the client's chain.
 */
export async function finalStateOf(
  client: PublicClient,
  one: Authorization,
  now = Date.now(),
): Promise<'used' | 'unused' | 'pending' | 'stale' | 'other-chain'> {
  const [chainId, block] = await Promise.all([client.getChainId(), client.getBlock({ blockTag: 'latest' })]);
  if (chainId !== one.chainId) return 'other-chain';
  if (block.timestamp < one.validBefore + REORG_MARGIN_SECONDS)
    return Number(block.timestamp) * 1000 < now - STALE_CHAIN_MS ? 'stale' : 'pending';
  return (await usedAt(client, one, block.number)) ? 'used' : 'unused';
}

/**
 * Refused authorizations, kept reserved until the chain says what became of each. The token takes
 * one only in a block whose time is before its validBefore, so once the latest block's time has
 * reached it, its state at that block is final: used (a site settled it after refusing it: spent,
 * one payment more) or not (the reservation is freed). Checked by a timer after each validBefore,
 * and whenever settle() is called; without a chain client (a LocalAccount with no rpcUrl), or on
 * another chain than the client's, they stay reserved and are not polled.
 */
export function heldAuthorizations(budget: Budget, chainClient: () => PublicClient | undefined) {
  const held = new Set<HeldAuthorization>();
  /** Those whose reservation was settled (by a poll or resolve()): never settled again. */
  const settled = new WeakSet<HeldAuthorization>();
  let timer: NodeJS.Timeout | undefined;

  /** Settles one's reservation, unless that was done already; whether this did it. */
  async function end(one: HeldAuthorization, used: boolean): Promise<boolean> {
    held.delete(one);
    if (settled.has(one)) return false;
    settled.add(one);
    if (one.reservation) await budget.settle(one.reservation, used);
    if (!used) await one.onFreed?.();
    return true;
  }

  async function settle(): Promise<HeldOutcome> {
    const outcome: HeldOutcome = { freed: 0, spent: 0 };
    const client = held.size > 0 ? chainClient() : undefined;
    if (client) {
      const [chainId, block] = await Promise.all([client.getChainId(), client.getBlock({ blockTag: 'latest' })]);
      for (const one of [...held]) {
        // Another chain than the client's: this agent cannot tell, so it stays reserved (and unpolled).
        if (one.chainId !== chainId) held.delete(one);
        // A margin past validBefore: a reorg of the newest blocks cannot bring back a time before it.
        if (one.chainId !== chainId || block.timestamp < one.validBefore + REORG_MARGIN_SECONDS) continue;
        const used = await usedAt(client, one, block.number);
        if (!held.has(one) || !(await end(one, used))) continue; // settled by a call that ran meanwhile
        outcome[used ? 'spent' : 'freed']++;
      }
    }
    schedule();
    return outcome;
  }

  /** The next check: after the earliest validBefore, or a while from now when it has passed. */
  function schedule(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (held.size === 0) return;
    const earliest = [...held].map((one) => one.validBefore).reduce((a, b) => (a < b ? a : b));
    const waitMs =
      Math.max(Number(earliest + REORG_MARGIN_SECONDS) * 1000 - Date.now(), 0) + CHECK_DELAY_SECONDS * 1000;
    timer = setTimeout(() => void settle().catch(() => schedule()), Math.min(waitMs, MAX_TIMER_MS));
    timer.unref();
  }

  return {
    /**
     * Ends one as its gate's API or the chain showed it (a token the API answers for it: used):
     * held, or never held (no chain client, another chain than the client's); one settled already
     * is left as it was.
     */
    async resolve(one: HeldAuthorization, used: boolean): Promise<void> {
      await end(one, used);
      schedule();
    },
    /** Whether it is watched: without a chain client nothing can be learnt, it stays reserved and nothing polls for it. */
    add(one: HeldAuthorization): boolean {
      if (!chainClient()) return false;
      held.add(one);
      schedule();
      return true;
    },
    settle,
    get size() {
      return held.size;
    },
  };
}

/** Past its authorization's validBefore, how long a page refused but held is not paid again: the chain's clock may lag. */
export const HELD_PAGE_MARGIN_MS = 60_000;

/**
 * An exact payment refused (a 402, a failed settlement) while the site holds its authorization. A
 * front can answer its own 402 to a payment its gate settled: once the hold is over, before its
 * page is paid anew, the gate's API (if it names one) is asked whether it recorded the payment,
 * and the chain whether the authorization was used.
 */
export interface RefusedPayment {
  /** The page it paid. */
  url: string;
  offer: Offer;
  /** The offer's verify_url; none for a plain x402 site, or when a front took it out. */
  verifyUrl?: string;
  header: [name: string, value: string];
  /** Epoch milliseconds: when it was sent, or just before (Receipt.sentAt). */
  sentAt: number;
  /** As held (heldAuthorizations), whose reservation it ends once its fate is known. */
  authorization: HeldAuthorization;
  /** The keys it is kept under (HeldPages': its page, and the URL asked for). */
  keys: string[];
}

/**
 * Keeps a refused payment under each of its keys (its page, then the URL asked for). The URL asked
 * for never replaces a live payment of the page it is itself the key of (a query is no part of a
 * key, so another fetch's link may share it): that payment is what is asked about (its gate, the
 * chain) before its page is paid again, and lost, the page would be paid twice.
 */
export function keepRefusedPayment(store: KeptByPage<RefusedPayment>, payment: RefusedPayment): void {
  const [page, ...asked] = payment.keys;
  store.keep(page, payment);
  for (const key of asked) if (key !== page && store.get(key)?.keys[0] !== key) store.keep(key, payment);
}

/**
 * Refused payments kept at most (under each of their keys): a full store drops those no token could
 * follow any more, then the oldest of the site holding the most (siteGroupsOf), so that a site
 * made to refuse many cannot push out another's (whose page would be paid anew unasked).
 */
export const MAX_REFUSED_PAYMENTS = 1_000;

/** Pages of one host (whatever its ports and schemes) whose payment may be refused but held at once. */
export const MAX_HELD_PER_HOST = 3;
export const MAX_HELD_PER_DOMAIN = 6;

/**
 * The domain a host name is held with: its last two labels (refusing.example for
 * p1.refusing.example), an IPv6 address's /48 (what a site is commonly given, a tunnel broker's
 * for free: it could link each page to another address or subnet of it), or the host itself when it is an IPv4 address or has fewer
 * labels. Without a public suffix list, the sites under one suffix of more labels (co.uk,
 * github.io, com.au) share it: one of them holding MAX_HELD_PER_DOMAIN refused payments keeps the
 * agent from paying the others until one ends. Nothing is lost that way; a site would otherwise
 * get one authorization per host name.
 */
export function domainOf(host: string): string {
  const name = host.toLowerCase().replace(/\.+$/, '');
  if (name.startsWith('[')) return ipv6Prefix(name);
  if (/^[\d.]+$/.test(name)) return name;
  return name.split('.').slice(-2).join('.');
}

/**
 * The groups of a page's host (a TokenCache key), widest first, that a full store of refused
 * payments lets go from (KeptByPage): its domain (domainOf), then one label more (without a public
 * suffix list, sites under co.uk or github.io share a domain; their next label parts them), then
 * the host. An IPv4 address is grouped by its /24 first, as an IPv6 one by its /48: a block of
 * addresses is one site's as readily as a set of host names.
 */
export function siteGroupsOf(page: string): string[] {
  const host = TokenCache.hostOf(page).toLowerCase().replace(/\.+$/, '');
  if (/^[\d.]+$/.test(host)) return [`${host.split('.').slice(0, 3).join('.')}.0/24`, host];
  if (host.startsWith('[')) return [domainOf(host), host];
  return [domainOf(host), host.split('.').slice(-3).join('.'), host];
}

/** A bracketed IPv6 address's first 48 bits, as `[2001:db8:7::]/48` (a URL's host is never written with a zone). */
function ipv6Prefix(host: string): string {
  const [head, tail] = host.slice(1, -1).split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return `[${groups
    .slice(0, 3)
    .map((group) => parseInt(group, 16).toString(16))
    .join(':')}::]/48`;
}

/** When fewer than `limit` of these held pages remain: the end of the one that brings them below it. */
function heldUntil(pages: { until: number }[], limit: number): number | undefined {
  const ends = pages.map((page) => page.until).sort((a, b) => a - b);
  return ends.length >= limit ? ends[ends.length - limit] : undefined;
}

/**
 * Pages whose payment was refused while the site holds its authorization, until it expires; and
 * the URLs asked for that led to them (aliases), held alike but counted against no host.
 */
export class HeldPages {
  private readonly held = new Map<string, { until: number; alias: boolean }>();

  /**
   * `alias`: `key` is the URL asked for, a redirect away from the page refused, perhaps on another
   * host. A key still held is never weakened: a page stays a page (counted) and keeps its later end,
   * whatever alias of another fetch shares its key (its URL asked for, with a query, say).
   */
  keep(key: string, until: number, { alias = false } = {}, now = Date.now()): void {
    if (this.held.size >= 1_000) this.dropEnded();
    const was = this.held.get(key);
    this.held.set(
      key,
      was && was.until > now ? { until: Math.max(was.until, until), alias: was.alias && alias } : { until, alias },
    );
  }

  /** When the page (a TokenCache key) may be paid again; undefined: now. */
  until(page: string, now = Date.now()): number | undefined {
    const until = this.held.get(page)?.until;
    if (until === undefined || until <= now) {
      this.held.delete(page);
      return undefined;
    }
    return until;
  }

  /**
   * When a page of `host` may be paid again, while MAX_HELD_PER_HOST of its pages are held, or
   * MAX_HELD_PER_DOMAIN of its domain's (a site with wildcard DNS sends each link to a new host
   * name): a site refusing every payment gets that many authorizations at most, an honest one
   * refusing one (too little in the wallet) does not stop the agent paying its other pages. Only
   * pages refused count: a host whose links redirect to a refusing site is not held for it.
   */
  hostUntil(host: string, now = Date.now()): number | undefined {
    const domain = domainOf(host);
    const held = [...this.held]
      .filter(([, { until, alias }]) => !alias && until > now)
      .map(([page, { until }]) => ({ host: TokenCache.hostOf(page), until }));
    const ofHost = held.filter((page) => page.host === host);
    const ofDomain = held.filter((page) => domainOf(page.host) === domain);
    const ends = [heldUntil(ofHost, MAX_HELD_PER_HOST), heldUntil(ofDomain, MAX_HELD_PER_DOMAIN)];
    const until = Math.max(...ends.map((end) => end ?? -Infinity));
    return until === -Infinity ? undefined : until;
  }

  /** How many pages of `host`, and of its domain, are held now (aliases not counted). */
  counted(host: string, now = Date.now()): { host: number; domain: number } {
    const domain = domainOf(host);
    let ofHost = 0;
    let ofDomain = 0;
    for (const [page, { until, alias }] of this.held) {
      if (alias || until <= now) continue;
      const pageHost = TokenCache.hostOf(page);
      if (pageHost === host) ofHost++;
      if (domainOf(pageHost) === domain) ofDomain++;
    }
    return { host: ofHost, domain: ofDomain };
  }

  private dropEnded(now = Date.now()): void {
    for (const [page, { until }] of this.held) if (until <= now) this.held.delete(page);
  }
}
