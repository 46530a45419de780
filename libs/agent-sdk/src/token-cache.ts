import { MAX_ACCESS_TOKEN_TTL_SECONDS, peekAccessTokenPayload, requestPath } from '@crawlgate/core';
import { paidGateRef, type Offer } from './offers';

/** Seconds before expiry at which a token is no longer offered: it must survive the round trip. */
const EXPIRY_MARGIN_SECONDS = 5;
/**
 * Tokens kept at most (each up to core's MAX_ACCESS_TOKEN_LENGTH): a full cache drops its expired
 * tokens, then its least recently used. A dropped token's page is paid again if fetched again before
 * it would have expired, so the bound is generous; the tokens a site's pages are read with are the
 * most recently used, whatever another site buys (offers of 0 are no offers: buying costs it).
 */
export const MAX_CACHED_TOKENS = 10_000;

/**
 * Access tokens by origin and path (a token opens exactly the path it was paid for), until they
 * expire, and never longer than the API issues tokens for: a site naming a later expiry (year
 * 9999) gets its token dropped as soon as one of ours would have expired.
 */
export class TokenCache {
  /** In the order they were last kept or offered: the first is the least recently used. */
  private readonly tokens = new Map<string, { token: string; exp: number }>();
  /** No kept token expires before this: a sweep before it would find nothing. */
  private earliestExp = Infinity;

  constructor(private readonly maxTokens = MAX_CACHED_TOKENS) {}

  /**
   * The page's key: its origin and its path as the gate reads it. A host's trailing dot is dropped
   * and an IPv4-mapped IPv6 address written as its IPv4 one: the same site either way.
   */
  static key(url: URL): string {
    const host = sameHost(url.hostname);
    return `${url.protocol}//${host}${url.port ? `:${url.port}` : ''}${requestPath(url.pathname)}`;
  }

  /** The origin a key() starts with (the path follows it). */
  static originOf(key: string): string {
    const path = key.indexOf('/', key.indexOf('//') + 2);
    return path < 0 ? key : key.slice(0, path);
  }

  /** The host a key() names, whatever its scheme and port: one site. */
  static hostOf(key: string): string {
    return TokenCache.originOf(key)
      .replace(/^[a-z][a-z0-9+.-]*:\/\//i, '')
      .replace(/:\d+$/, '');
  }

  get size(): number {
    return this.tokens.size;
  }

  get(key: string, nowSeconds = Date.now() / 1000): string | undefined {
    const entry = this.tokens.get(key);
    if (!entry) return undefined;
    this.tokens.delete(key);
    if (!isLive(entry.exp, nowSeconds)) return undefined;
    // Kept again as the most recently used: a full cache drops the least recently used first.
    this.tokens.set(key, entry);
    return entry.token;
  }

  /**
   * Keeps a token the site issued; one that cannot be read is not kept (it would never be offered
   * correctly), nor one longer than core's MAX_ACCESS_TOKEN_LENGTH (peekAccessTokenPayload refuses it).
   */
  set(key: string, token: string, nowSeconds = Date.now() / 1000): void {
    const payload = peekAccessTokenPayload(token);
    if (!payload) return;
    const exp = Math.min(payload.exp, nowSeconds + MAX_ACCESS_TOKEN_TTL_SECONDS);
    this.tokens.delete(key); // kept again below as the newest
    if (!isLive(exp, nowSeconds)) return;
    if (this.tokens.size >= this.maxTokens) this.makeRoom(nowSeconds);
    this.tokens.set(key, { token, exp });
    if (exp < this.earliestExp) this.earliestExp = exp;
  }

  /** Drops the expired tokens, then the least recently used until one more fits. */
  private makeRoom(nowSeconds: number): void {
    if (!isLive(this.earliestExp, nowSeconds)) {
      this.earliestExp = Infinity;
      for (const [key, { exp }] of this.tokens) {
        if (!isLive(exp, nowSeconds)) this.tokens.delete(key);
        else if (exp < this.earliestExp) this.earliestExp = exp;
      }
    }
    for (const key of this.tokens.keys()) {
      if (this.tokens.size < this.maxTokens) break;
      this.tokens.delete(key);
    }
  }
}

/**
 * Where a payment went: its page, the offer it paid, and the `verify_url` now known for it (a v1
 * payment sent again meets a fresh gate, whose pending answer names its own).
 */
export interface PaidAt {
  url: string | URL;
  offer: Offer;
  verifyUrl?: string;
}

/**
 * Whether `token` is what the payment at `paidAt` bought: a Crawlgate gate's token names that gate's
 * ref (however a proxy before the gate spelled the page's path); where no gate was named, a token naming
 * the page (its path as the gate reads it, the one key() keeps tokens under). Its signature is the
 * site's to check: a token of another gate or page confirms no payment for this one.
 */
export function tokenBoughtAt(token: string | null | undefined, { url, offer, verifyUrl }: PaidAt): boolean {
  const payload = token ? peekAccessTokenPayload(token) : null;
  if (!payload) return false;
  const gateRef = paidGateRef(offer, verifyUrl);
  return gateRef !== undefined ? payload.gate_id === gateRef : payload.url === requestPath(new URL(url).pathname);
}

/** A host name as one site spells it: no trailing dot, an IPv4-mapped IPv6 address as IPv4. */
function sameHost(hostname: string): string {
  const mapped = /^\[::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})\]$/.exec(hostname);
  if (mapped) {
    const [high, low] = [parseInt(mapped[1], 16), parseInt(mapped[2], 16)];
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  }
  return hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
}

const isLive = (exp: number, nowSeconds: number) => exp - EXPIRY_MARGIN_SECONDS > nowSeconds;
