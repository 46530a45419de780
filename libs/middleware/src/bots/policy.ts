/*
 * What happens to each kind of bot: the site's policy applied to a classified visitor. The words
 * and the defaults (AI crawlers, SEO tools and anonymous automation pay; search engines and social
 * previews pass) are @crawlgate/core's, bot-policy.ts, where the reasons are written down.
 */

import {
  BOT_CATEGORIES,
  DEFAULT_CATEGORY_ACTIONS,
  isBotAction,
  isPlainObject,
  policyBotName,
  type BotAction,
  type BotCategory,
  UNKNOWN_AUTOMATION,
} from '@crawlgate/core';
import type { BotPolicy } from './types';

export { DEFAULT_CATEGORY_ACTIONS, UNKNOWN_AUTOMATION, UNKNOWN_CRAWLER } from '@crawlgate/core';

/**
 * The per-bot override wins (but for a robots.txt token's), then the category override, then the
 * default. Names compare in any case.
 */
export function resolveBotAction(name: string, category: BotCategory, policy: BotPolicy | undefined): BotAction {
  // A robots.txt token is no crawler's User-Agent: an entry allowing it would free whoever writes it.
  const byName = policy?.bots && !policyBotName(name)?.robotsTxtOnly ? findByName(policy.bots, name) : undefined;
  if (byName !== undefined) return checkedAction(byName, `policy.bots["${name}"]`);
  const byCategory = policy?.categories?.[category];
  if (byCategory !== undefined) return checkedAction(byCategory, `policy.categories["${category}"]`);
  return DEFAULT_CATEGORY_ACTIONS[category];
}

/** Whether the policy lets `name` (of `category`) through only with a verified signature. */
export function requiresSignature(name: string, category: BotCategory, policy: BotPolicy | undefined): boolean {
  const required = policy?.requireSignature;
  if (!required) return false;
  if (required.categories?.includes(category)) return true;
  const lower = name.toLowerCase();
  return required.bots?.some((bot) => typeof bot === 'string' && bot.toLowerCase() === lower) ?? false;
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

/**
 * Everything wrong with a policy, as sentences; empty when it is fine. Meant for start-up, so a
 * typo ("GPT-Bot") or a token no crawler sends ("Google-Extended") is reported once, not ignored
 * on every request.
 */
export function botPolicyProblems(policy: unknown): string[] {
  if (policy === undefined) return [];
  if (!isPlainObject(policy))
    return ['policy must be an object with optional "categories", "bots" and "requireSignature"'];
  const problems: string[] = [];
  for (const key of Object.keys(policy)) {
    if (key !== 'categories' && key !== 'bots' && key !== 'requireSignature')
      problems.push(`policy.${key} is not an option: use "categories", "bots" and "requireSignature"`);
  }
  const { categories, bots, requireSignature } = policy as BotPolicy;
  if (categories !== undefined) {
    if (!isPlainObject(categories)) problems.push('policy.categories must be an object');
    else {
      for (const [category, action] of Object.entries(categories)) {
        if (!(BOT_CATEGORIES as readonly string[]).includes(category)) {
          problems.push(`policy.categories["${category}"]: no such category (${BOT_CATEGORIES.join(', ')})`);
        } else if (!isBotAction(action)) {
          problems.push(
            `policy.categories["${category}"] is ${JSON.stringify(action)}: use "allow", "charge" or "block"`,
          );
        }
      }
    }
  }
  if (bots !== undefined) {
    if (!isPlainObject(bots)) problems.push('policy.bots must be an object');
    else {
      for (const [name, action] of Object.entries(bots)) {
        const problem = nameProblem(name);
        if (problem) problems.push(`policy.bots["${name}"]: ${problem}`);
        if (!isBotAction(action))
          problems.push(`policy.bots["${name}"] is ${JSON.stringify(action)}: use "allow", "charge" or "block"`);
      }
    }
  }
  if (requireSignature !== undefined) problems.push(...requireSignatureProblems(requireSignature));
  const anySigner = anySignerWarning(policy as BotPolicy, 'policy');
  if (anySigner) problems.push(anySigner);
  return problems;
}

/**
 * The warning for a policy under which a signature from any origin at all, the catalogue's or not,
 * lets a request through free; undefined when it does not, or when the parts that would say cannot
 * be read (those are problems of their own). `named` says which policy: the code's or the stored one.
 */
export function anySignerWarning(policy: BotPolicy, named: string): string | undefined {
  let frees: boolean;
  try {
    frees =
      requiresSignature(UNKNOWN_AUTOMATION, 'automation', policy) &&
      resolveBotAction(UNKNOWN_AUTOMATION, 'automation', policy) === 'allow';
  } catch {
    return undefined;
  }
  if (!frees) return undefined;
  return `${named} requires a signature of unknown-automation and allows it: anyone can publish a key directory, so every request signed by a key of its own passes free (a signature from an origin the catalogue does not know says only which host signed); charge it, or allow the crawlers you trust by name`;
}

function requireSignatureProblems(requireSignature: unknown): string[] {
  if (!isPlainObject(requireSignature))
    return ['policy.requireSignature must be an object with optional lists "categories" and "bots"'];
  const problems: string[] = [];
  for (const key of Object.keys(requireSignature)) {
    if (key !== 'categories' && key !== 'bots')
      problems.push(`policy.requireSignature.${key} is not an option: use "categories" and "bots"`);
  }
  const { categories, bots } = requireSignature;
  if (categories !== undefined) {
    if (!Array.isArray(categories)) problems.push('policy.requireSignature.categories must be a list');
    else {
      for (const category of categories) {
        if (!(BOT_CATEGORIES as readonly unknown[]).includes(category))
          problems.push(
            `policy.requireSignature.categories: ${JSON.stringify(category)} is no category (${BOT_CATEGORIES.join(', ')})`,
          );
      }
    }
  }
  if (bots !== undefined) {
    if (!Array.isArray(bots)) problems.push('policy.requireSignature.bots must be a list');
    else {
      for (const name of bots) {
        const problem = typeof name === 'string' ? nameProblem(name) : `${JSON.stringify(name)} is not a name`;
        if (problem) problems.push(`policy.requireSignature.bots["${String(name)}"]: ${problem}`);
      }
    }
  }
  return problems;
}

function nameProblem(name: string): string | undefined {
  const known = policyBotName(name);
  if (!known) return 'no bot of that name in the catalogue';
  if (known.robotsTxtOnly)
    return `${known.name} is a robots.txt token that no crawler sends as its User-Agent (whoever does is an impostor), so this entry is ignored`;
  return undefined;
}
