/*
 * The words of the bot policy. Categories, actions and the catalogue's names are @crawlgate/core's
 * (bot-policy.ts), shared with the API that stores a site's policy; this is the policy as code
 * passes it to the middleware.
 */

import type { BotAction, BotCategory } from '@crawlgate/core';

export { BOT_ACTIONS, BOT_CATEGORIES, type BotAction, type BotCategory } from '@crawlgate/core';

/** Category actions apply first; a per-bot action (keyed by catalogue name, any case) wins over them. */
export interface BotPolicy {
  categories?: Partial<Record<BotCategory, BotAction>>;
  bots?: Record<string, BotAction>;
  /**
   * Crawlers that must carry a valid Web Bot Auth signature, by category and by catalogue name
   * (any case): an unsigned request of one is never allowed.
   */
  requireSignature?: { categories?: BotCategory[]; bots?: string[] };
}

export type Visitor = { kind: 'human' } | { kind: 'bot'; name: string; category: BotCategory; action: BotAction };

export interface BotSignature {
  /** Stable name: what `Visitor.name` reports and what `BotPolicy.bots` is keyed by. */
  readonly name: string;
  readonly category: BotCategory;
  /** Tested against the User-Agent header; case-insensitive, never global (so `test` is stateless). */
  readonly pattern: RegExp;
  /** Who runs it. */
  readonly operator: string;
  /** The operator's documentation of the crawler. */
  readonly url?: string;
  /**
   * A robots.txt product token that no crawler sends as its User-Agent (Google-Extended,
   * Applebot-Extended): the operator crawls under its main agent and uses the token only to read
   * robots.txt rules, so a User-Agent match can never tell these requests apart.
   */
  readonly robotsTxtOnly?: true;
}
