import { MAX_ACCESS_TOKEN_TTL_SECONDS, peekAccessTokenPayload, requestPath } from '@crawlgate/core';

/** Seconds before expiry at which a token is no longer offered: it must survive the round trip. */
const EXPIRY_MARGIN_SECONDS = 5;
/**
 * Tokens kept at most (each up to core's MAX_ACCESS_TOKEN_LENGTH): a full cache drops its expired
 * tokens, then the least recently used, but of the site it keeps one for when that site holds a
 * tenth of the cache already. A dropped token's page is paid again if fetched again before it would
 * have expired, so the bound is generous, and a site selling many pages (a hostile one: for almost
 * nothing) pushes out its own tokens, not those bought elsewhere.
 */
export const MAX_CACHED_TOKENS = 10_000;

interface Entry {
  token: string;
  exp: number;
  origin: string;
}

/**
 * Access tokens by origin and path (a token opens exactly the path it was paid for), until they
 * expire, and never longer than the API issues tokens for: a site naming a later expiry (year
 * 9999) gets its token dropped as soon as one of ours would have expired.
 */
export class TokenCache {
  /** In the order they were last kept or offered: the first is the least recently used. */
  private readonly tokens = new Map<string, Entry>();
  /** How many tokens each origin holds. */
  private readonly perOrigin = new Map<string, number>();
  /** No kept token expires before this: a sweep before it would find nothing. */
  private earliestExp = Infinity;

  constructor(private readonly maxTokens = MAX_CACHED_TOKENS) {}

  static key(url: URL): string {
    return `${url.origin}${requestPath(url.pathname)}`;
  }

  /** The origin a key() starts with (the path follows it). */
  static originOf(key: string): string {
    const path = key.indexOf('/', key.indexOf('//') + 2);
    return path < 0 ? key : key.slice(0, path);
  }

  get size(): number {
    return this.tokens.size;
  }

  get(key: string, nowSeconds = Date.now() / 1000): string | undefined {
    const entry = this.tokens.get(key);
    if (!entry) return undefined;
    this.tokens.delete(key);
    if (!isLive(entry.exp, nowSeconds)) {
      this.counted(entry.origin, -1);
      return undefined;
    }
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
    this.drop(key); // kept again below as the newest
    if (!isLive(exp, nowSeconds)) return;
    const origin = TokenCache.originOf(key);
    if (this.tokens.size >= this.maxTokens) this.makeRoom(origin, nowSeconds);
    this.tokens.set(key, { token, exp, origin });
    this.counted(origin, 1);
    if (exp < this.earliestExp) this.earliestExp = exp;
  }

  /**
   * Drops the expired tokens, then the least recently used until one more fits: `origin`'s own when
   * it holds a tenth of the cache (one origin per page, each holding one, cannot push out a
   * site's tokens in use: those are the most recently used).
   */
  private makeRoom(origin: string, nowSeconds: number): void {
    if (!isLive(this.earliestExp, nowSeconds)) {
      this.earliestExp = Infinity;
      for (const [key, { exp }] of this.tokens) {
        if (!isLive(exp, nowSeconds)) this.drop(key);
        else if (exp < this.earliestExp) this.earliestExp = exp;
      }
    }
    const share = Math.max(1, Math.floor(this.maxTokens / 10));
    while (this.tokens.size > 0 && this.tokens.size >= this.maxTokens) {
      const ownOnly = (this.perOrigin.get(origin) ?? 0) >= share;
      for (const [key, entry] of this.tokens)
        if (!ownOnly || entry.origin === origin) {
          this.drop(key);
          break;
        }
    }
  }

  private drop(key: string): void {
    const entry = this.tokens.get(key);
    if (!entry) return;
    this.tokens.delete(key);
    this.counted(entry.origin, -1);
  }

  private counted(origin: string, by: 1 | -1): void {
    const count = (this.perOrigin.get(origin) ?? 0) + by;
    if (count > 0) this.perOrigin.set(origin, count);
    else this.perOrigin.delete(origin);
  }
}

const isLive = (exp: number, nowSeconds: number) => exp - EXPIRY_MARGIN_SECONDS > nowSeconds;
