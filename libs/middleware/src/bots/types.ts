/*
 * The words of the bot policy. Categories say what a crawler does with a page, because that is what
 * a site owner prices: training a model, answering one user's question, indexing for search.
 */

export type BotCategory =
  | 'ai-training'
  | 'ai-assistant'
  | 'ai-search'
  | 'search-engine'
  | 'seo'
  | 'social-preview'
  | 'automation';

export type BotAction = 'allow' | 'charge' | 'block';

/** Category actions apply first; a per-bot action (keyed by catalogue name, any case) wins over them. */
export interface BotPolicy {
  categories?: Partial<Record<BotCategory, BotAction>>;
  bots?: Record<string, BotAction>;
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

export const BOT_CATEGORIES: readonly BotCategory[] = [
  'ai-training',
  'ai-assistant',
  'ai-search',
  'search-engine',
  'seo',
  'social-preview',
  'automation',
];

export const BOT_ACTIONS: readonly BotAction[] = ['allow', 'charge', 'block'];
