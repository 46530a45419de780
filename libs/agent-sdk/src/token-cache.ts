import { peekAccessTokenPayload, requestPath } from '@crawlgate/core';

/** Seconds before expiry at which a token is no longer offered: it must survive the round trip. */
const EXPIRY_MARGIN_SECONDS = 5;

/** Access tokens by origin and path (a token opens exactly the path it was paid for), until they expire. */
export class TokenCache {
  private readonly tokens = new Map<string, { token: string; exp: number }>();

  static key(url: URL): string {
    return `${url.origin}${requestPath(url.pathname)}`;
  }

  get(key: string, nowSeconds = Date.now() / 1000): string | undefined {
    const entry = this.tokens.get(key);
    if (entry && entry.exp - EXPIRY_MARGIN_SECONDS > nowSeconds) return entry.token;
    if (entry) this.tokens.delete(key);
    return undefined;
  }

  /** Keeps a token the site issued; one that cannot be read is not kept (it would never be offered correctly). */
  set(key: string, token: string): void {
    const payload = peekAccessTokenPayload(token);
    if (payload) this.tokens.set(key, { token, exp: payload.exp });
  }
}
