/*
 * What happens to each kind of bot. Defaults follow what publishers ask of pay-per-crawl: AI
 * crawlers pay, whatever the purpose; so does anything that hides what it is. Crawlers that send
 * readers back (search engines) or draw a link card where someone shared the page (social
 * previews) pass.
 *
 * SEO crawlers pass too: they republish no content, they are often the site owner's own tools
 * (audits, Lighthouse, backlink checks), and a 402 would break those tools for the very people
 * who installed the gate. An owner who disagrees sets `categories: { seo: 'block' }`.
 */

import { BOT_CATALOGUE } from './catalogue';
import { BOT_ACTIONS, BOT_CATEGORIES, type BotAction, type BotCategory, type BotPolicy } from './types';

export const DEFAULT_CATEGORY_ACTIONS: Readonly<Record<BotCategory, BotAction>> = Object.freeze({
  'ai-training': 'charge',
  'ai-assistant': 'charge',
  'ai-search': 'charge',
  'search-engine': 'allow',
  seo: 'allow',
  'social-preview': 'allow',
  automation: 'charge',
});

/** Names the classifier gives visitors that match no catalogue entry (both in category 'automation'). */
export const UNKNOWN_CRAWLER = 'unknown-crawler';
export const UNKNOWN_AUTOMATION = 'unknown-automation';

/** The per-bot override wins, then the category override, then the default. Names compare in any case. */
export function resolveBotAction(name: string, category: BotCategory, policy: BotPolicy | undefined): BotAction {
  const byName = policy?.bots ? findByName(policy.bots, name) : undefined;
  if (byName !== undefined) return checkedAction(byName, `policy.bots["${name}"]`);
  const byCategory = policy?.categories?.[category];
  if (byCategory !== undefined) return checkedAction(byCategory, `policy.categories["${category}"]`);
  return DEFAULT_CATEGORY_ACTIONS[category];
}

function findByName(bots: Record<string, BotAction>, name: string): BotAction | undefined {
  if (Object.hasOwn(bots, name)) return bots[name];
  const lower = name.toLowerCase();
  for (const key of Object.keys(bots)) if (key.toLowerCase() === lower) return bots[key];
  return undefined;
}

// Reachable only from untyped callers; a silent fallback would charge or free bots against the owner's wish.
function checkedAction(action: unknown, where: string): BotAction {
  if (isBotAction(action)) return action;
  throw new TypeError(`${where} is ${JSON.stringify(action)}: use "allow", "charge" or "block"`);
}

function isBotAction(value: unknown): value is BotAction {
  return (BOT_ACTIONS as readonly unknown[]).includes(value);
}

const KNOWN_NAMES = new Map<string, { name: string; robotsTxtOnly: boolean }>(
  [
    ...BOT_CATALOGUE.map((bot) => ({ name: bot.name, robotsTxtOnly: bot.robotsTxtOnly === true })),
    { name: UNKNOWN_CRAWLER, robotsTxtOnly: false },
    { name: UNKNOWN_AUTOMATION, robotsTxtOnly: false },
  ].map((entry) => [entry.name.toLowerCase(), entry]),
);

/**
 * Everything wrong with a policy, as sentences; empty when it is fine. Meant for start-up, so a
 * typo ("GPT-Bot") or a token no crawler sends ("Google-Extended") is reported once, not ignored
 * on every request.
 */
export function botPolicyProblems(policy: unknown): string[] {
  if (policy === undefined) return [];
  if (!isPlainObject(policy)) return ['policy must be an object with optional "categories" and "bots"'];
  const problems: string[] = [];
  for (const key of Object.keys(policy)) {
    if (key !== 'categories' && key !== 'bots') problems.push(`policy.${key} is not an option: use "categories" and "bots"`);
  }
  const { categories, bots } = policy as BotPolicy;
  if (categories !== undefined) {
    if (!isPlainObject(categories)) problems.push('policy.categories must be an object');
    else {
      for (const [category, action] of Object.entries(categories)) {
        if (!(BOT_CATEGORIES as readonly string[]).includes(category)) {
          problems.push(`policy.categories["${category}"]: no such category (${BOT_CATEGORIES.join(', ')})`);
        } else if (!isBotAction(action)) {
          problems.push(`policy.categories["${category}"] is ${JSON.stringify(action)}: use "allow", "charge" or "block"`);
        }
      }
    }
  }
  if (bots !== undefined) {
    if (!isPlainObject(bots)) problems.push('policy.bots must be an object');
    else {
      for (const [name, action] of Object.entries(bots)) {
        const known = KNOWN_NAMES.get(name.toLowerCase());
        if (!known) problems.push(`policy.bots["${name}"]: no bot of that name in the catalogue`);
        else if (known.robotsTxtOnly) {
          problems.push(`policy.bots["${name}"]: ${known.name} is a robots.txt token that no crawler sends as its User-Agent, so this entry never applies`);
        }
        if (!isBotAction(action)) problems.push(`policy.bots["${name}"] is ${JSON.stringify(action)}: use "allow", "charge" or "block"`);
      }
    }
  }
  return problems;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
