/*
 * How long the tokens each site's gate issues live, learned from the tokens it sold this agent.
 * A payment whose outcome is unknown is asked about for as long as the token it bought could live:
 * with none learned, a token's default life (ACCESS_TOKEN_TTL_SECONDS). An API may issue longer
 * ones, and a page whose answer was lost while that API cannot be asked would be paid a second time
 * while its first token still opened it. Read from tokens the agent cannot check: a site claiming
 * a longer life has its own pages wait longer, up to the longest a token lives, and no other's.
 */

import { ACCESS_TOKEN_TTL_SECONDS, MAX_ACCESS_TOKEN_TTL_SECONDS, peekAccessTokenPayload } from '@crawlgate/core';

/** Sites remembered at most: past it, the one learned longest ago is forgotten (its tokens taken as default ones). */
export const MAX_SITES_LEARNED = 1_000;

export class TokenLives {
  /** Seconds, by host (TokenCache.hostOf), only those longer than the default. */
  private readonly byHost = new Map<string, number>();

  constructor(private readonly maxSites = MAX_SITES_LEARNED) {}

  /** A token `host`'s gate sold: its life (exp less iat) is remembered when it is the longest seen there. */
  learn(host: string, token: string): void {
    const payload = peekAccessTokenPayload(token);
    if (!payload) return;
    const life = Math.min(payload.exp - payload.iat, MAX_ACCESS_TOKEN_TTL_SECONDS);
    if (!(life > (this.byHost.get(host) ?? ACCESS_TOKEN_TTL_SECONDS))) return;
    this.byHost.delete(host);
    if (this.byHost.size >= this.maxSites) this.byHost.delete(this.byHost.keys().next().value as string);
    this.byHost.set(host, life);
  }

  /** Milliseconds: the longest a token of `host`'s gate is known to live, no less than the default life. */
  lifeMs(host: string): number {
    return (this.byHost.get(host) ?? ACCESS_TOKEN_TTL_SECONDS) * 1000;
  }
}
