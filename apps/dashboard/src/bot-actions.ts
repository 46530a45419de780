import {
  unverifiedAllowWarning,
  isBotCategory,
  policyBotName,
  UNKNOWN_AUTOMATION,
  UNKNOWN_CRAWLER,
  UNLISTED_AGENT,
  type BotAction,
  type SiteBotPolicy,
} from '@crawlgate/core';

/** Where a crawler's action comes from: its own entry, its category's, or the middleware's default. */
export type ActionSource = 'bot' | 'category' | 'default';

export interface EffectiveAction {
  action: BotAction;
  source: ActionSource;
}

type PolicyRules = Pick<SiteBotPolicy, 'bots' | 'categories' | 'defaults'>;

/**
 * What the stored policy does with a crawler, the way the middleware resolves it: its own action
 * (names compare in any case), else its category's, else the default. Null for a name no policy can
 * hold (people, the unlisted agents the middleware always charges, names outside the catalogue, the
 * catalogue's robots.txt-only tokens such as Google-Extended),
 * whose buttons could only fail, and for a category this dashboard does not know with no action of its own.
 */
export function effectiveAction(
  crawler: { crawler: string; category: string },
  policy: PolicyRules,
): EffectiveAction | null {
  const named = policyBotName(crawler.crawler);
  if (!named || named.robotsTxtOnly) return null;
  const own = ownAction(policy.bots, crawler.crawler);
  if (own) return { action: own, source: 'bot' };
  if (!isBotCategory(crawler.category)) return null;
  const byCategory = policy.categories[crawler.category];
  if (byCategory) return { action: byCategory, source: 'category' };
  return { action: policy.defaults[crawler.category], source: 'default' };
}

function ownAction(bots: Record<string, BotAction>, name: string): BotAction | undefined {
  if (Object.hasOwn(bots, name)) return bots[name];
  const lower = name.toLowerCase();
  const key = Object.keys(bots).find((candidate) => candidate.toLowerCase() === lower);
  return key === undefined ? undefined : bots[key];
}

/** Said under the action, so the publisher sees why it applies. */
export function describeSource(effective: EffectiveAction, category: string): string {
  switch (effective.source) {
    case 'bot':
      return 'set for this crawler';
    case 'category':
      return `by category ${category}`;
    default:
      return `default for ${category}`;
  }
}

/**
 * What one click on a group's row reaches: unknown-crawler and unknown-automation are every agent
 * the middleware cannot name, one signer or many, so "Allow" there lets all of them in. Null for a
 * named crawler.
 */
export function groupNote(crawler: string): string | null {
  if (crawler === UNKNOWN_AUTOMATION)
    return 'Every agent we cannot name (scripts, unknown signers, no User-Agent): an action here applies to all of them';
  if (crawler === UNKNOWN_CRAWLER) return 'Every crawler we cannot name: an action here applies to all of them';
  return null;
}

/**
 * Said in place of the actions of a row with none (effectiveAction is null): the middleware charges
 * every unlisted agent, and a robots.txt-only token is governed through its operator's crawler.
 */
export function noActionNote(crawler: string): string {
  if (crawler === UNLISTED_AGENT) return 'always charged';
  if (policyBotName(crawler)?.robotsTxtOnly) return 'a robots.txt token: set the action on its operator’s crawler';
  return '–';
}

/** The catalogue's warning (unverifiedAllowWarning) when the crawler is allowed; null otherwise. */
export function allowNote(crawler: string, action: BotAction | undefined): string | null {
  return action === 'allow' ? unverifiedAllowWarning(crawler) : null;
}
