/*
 * The bot policy the site stores in the API (GET /v1/site's `bot_policy`), and how it meets the
 * `policy` option passed in code. Merged key by key, and the code wins each key it sets:
 *
 *   categories          the code's action for a category replaces the stored one for it;
 *   bots                the code's action for a bot (any case) replaces the stored one for it;
 *   requireSignature    both lists are joined: a signature required in either place is required.
 *
 * Then the usual order decides a visitor: its bot's action (from either), else its category's
 * (from either), else the default. So a bot the dashboard sets keeps its action unless the code
 * names that same bot, even where the code sets its category.
 *
 * Never a fail-open: a stored policy this middleware cannot read (not an object, lists that are
 * not lists) is refused whole, and the last one that read well stays in force; before any, every
 * category charged at least, the code's included, under the bots the code names (policyBeforeStored).
 * An action it does not know (a newer API's) charges that key alone, or keeps it blocked where the
 * default (for a bot, its category's action) blocks: never an allow. Names it does not
 * know, a category or a crawler added to a newer catalogue than this one, are skipped with a
 * warning: no visitor this middleware classifies can carry them, so skipping them changes no answer.
 */

import {
  BOT_CATEGORIES,
  DEFAULT_CATEGORY_ACTIONS,
  isBotAction,
  isBotCategory,
  isPlainObject,
  MAX_POLICY_BOTS,
  policyBotName,
  stricterAction,
  type BotAction,
  type BotCategory,
  type BotPolicyOffer,
  type RequireSignature,
  type Untrusted,
} from '@crawlgate/core';
import { anySignerWarning, type BotPolicy } from './bots';

export interface StoredBotPolicy {
  /** The stored policy's version; undefined when the API sent none (an API that stores no policy). */
  version: number | undefined;
  /**
   * Which categories the API filled with its defaults, as read: with the version, what says the
   * policy moved (an API instance of an older version, during a deploy, may send the same version
   * number for a policy without its defaults).
   */
  defaults?: string;
  /** What the gate applies: the stored policy under the code's. */
  effective: BotPolicy | undefined;
  /** The API sent a policy this middleware could not read: it stores one, whatever a later answer omits. */
  unreadable?: true;
}

/**
 * The policy after a refresh that brought `stored` (the offer's `bot_policy`): re-read only when
 * its version moved; `previous` (the last good) when it cannot be read, with `warn` saying why.
 */
export function refreshBotPolicy(
  previous: StoredBotPolicy | undefined,
  stored: unknown,
  code: BotPolicy | undefined,
  warn: (message: string) => void,
): StoredBotPolicy {
  if (stored === undefined) {
    // An API that stores no policy: the code's alone. After one was sent, read or not, its absence
    // is no reason to drop it (or the charged-at-least stand-in for one that could not be read).
    if (previous?.version === undefined && !previous?.unreadable) return { version: undefined, effective: code };
    warn('the API sent no stored bot policy; keeping the one loaded before');
    return previous;
  }
  const offer: Untrusted<BotPolicyOffer> | undefined = isPlainObject(stored) ? stored : undefined;
  const version = offer?.version;
  // Only strings go into the key: anything else from the wire could throw when printed.
  const defaults = Array.isArray(offer?.default_categories)
    ? offer.default_categories.map((category) => (typeof category === 'string' ? category : '?')).join(',')
    : undefined;
  if (previous && previous.version !== undefined && previous.version === version && previous.defaults === defaults)
    return previous;
  const read = readStoredBotPolicy(stored, code);
  if (!read.ok) {
    warn(
      `the stored bot policy is unreadable (${read.problem}); ${previous?.version !== undefined ? 'keeping the one loaded before' : 'applying the bots named in code, every category charged at least'}`,
    );
    // The last good one, or (none read yet, the code's alone included) policyBeforeStored.
    return previous && (previous.version !== undefined || previous.unreadable)
      ? previous
      : { version: undefined, effective: policyBeforeStored(code), unreadable: true };
  }
  for (const name of read.skipped)
    warn(`the stored bot policy names ${name}, which this version of the middleware does not know; skipped`);
  for (const key of read.unknownActions)
    warn(`the stored bot policy gives ${key} an action this version of the middleware does not know; charged`);
  const effective = mergeBotPolicies(read.policy, code);
  // Start-up has warned of the code's own (botPolicyProblems); this is what the stored one brings.
  const anySigner =
    code && anySignerWarning(code, 'policy')
      ? undefined
      : anySignerWarning(effective, 'the bot policy (stored, under the code’s)');
  if (anySigner) warn(anySigner);
  return { version: read.version, defaults, effective };
}

/**
 * What the gate applies while no stored policy has been read (the API down at start-up, or its
 * policy unreadable): every category charged at least, the code's own categories included, since
 * the stored policy may charge crawlers the defaults allow (search engines, social previews), and
 * a bot it names wins over the code's category; only the bots the code names keep the code's action.
 */
export function policyBeforeStored(code: BotPolicy | undefined): BotPolicy {
  const categories: Partial<Record<BotCategory, BotAction>> = {};
  for (const category of BOT_CATEGORIES)
    categories[category] = stricterAction(code?.categories?.[category] ?? DEFAULT_CATEGORY_ACTIONS[category], 'charge');
  return mergeBotPolicies({ categories }, { ...code, categories: undefined });
}

type Read =
  | { ok: true; version: number; policy: BotPolicy; skipped: string[]; unknownActions: string[] }
  | { ok: false; problem: string };

/**
 * A stored policy as the API sends it (core's BotPolicyOffer), checked as untrusted input. `code`
 * (the policy option, which wins the categories it sets) only decides what a bot whose action is
 * unknown falls back to.
 */
export function readStoredBotPolicy(value: unknown, code?: BotPolicy): Read {
  if (!isPlainObject(value)) return { ok: false, problem: 'not an object' };
  // By core's names: a field renamed there fails to compile here.
  const { version, categories, bots, require_signature, default_categories }: Untrusted<BotPolicyOffer> = value;
  const signature: Untrusted<RequireSignature> | undefined = isPlainObject(require_signature)
    ? require_signature
    : undefined;
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 0)
    return { ok: false, problem: 'no version' };
  if (!isPlainObject(categories) || !isPlainObject(bots) || !signature)
    return { ok: false, problem: 'categories, bots or require_signature is not an object' };
  if (!Array.isArray(signature.categories) || !Array.isArray(signature.bots))
    return { ok: false, problem: 'require_signature.categories or .bots is not a list' };
  if (Object.keys(bots).length > MAX_POLICY_BOTS || signature.bots.length > MAX_POLICY_BOTS)
    return { ok: false, problem: `more than ${MAX_POLICY_BOTS} bots` };
  if (default_categories !== undefined && !Array.isArray(default_categories))
    return { ok: false, problem: 'default_categories is not a list' };

  const skipped: string[] = [];
  const unknownActions: string[] = [];
  const policy: Required<Pick<BotPolicy, 'categories' | 'bots'>> & {
    requireSignature: { categories: BotCategory[]; bots: string[] };
  } = {
    categories: {},
    bots: {},
    requireSignature: { categories: [], bots: [] },
  };
  for (const [category, action] of Object.entries(categories)) {
    if (!isBotCategory(category)) {
      skipped.push(`category "${category.slice(0, 40)}"`);
      continue;
    }
    if (!isBotAction(action)) unknownActions.push(`category "${category}"`);
    policy.categories[category] = isBotAction(action)
      ? action
      : stricterAction(DEFAULT_CATEGORY_ACTIONS[category], 'charge');
  }
  // A category the API filled with its default: the stricter of its default and ours, whichever is newer.
  for (const category of default_categories ?? []) {
    const action = isBotCategory(category) ? policy.categories[category] : undefined;
    if (action)
      policy.categories[category as BotCategory] = stricterAction(
        action,
        DEFAULT_CATEGORY_ACTIONS[category as BotCategory],
      );
  }
  for (const [name, action] of Object.entries(bots)) {
    const known = policyBotName(name);
    if (!known) {
      skipped.push(`bot "${name.slice(0, 40)}"`);
      continue;
    }
    if (!isBotAction(action)) unknownActions.push(`bot "${known.name}"`);
    // Charged, or blocked where its category blocks (as the code sets it, else as stored, else by default).
    const coded: unknown = code?.categories?.[known.category];
    const categoryAction =
      (isBotAction(coded) ? coded : undefined) ??
      policy.categories[known.category] ??
      DEFAULT_CATEGORY_ACTIONS[known.category];
    policy.bots[known.name] = isBotAction(action) ? action : stricterAction(categoryAction, 'charge');
  }
  for (const category of signature.categories) {
    if (typeof category !== 'string') return { ok: false, problem: 'require_signature.categories holds a non-string' };
    if (isBotCategory(category)) policy.requireSignature.categories.push(category);
    else skipped.push(`category "${category.slice(0, 40)}"`);
  }
  for (const name of signature.bots) {
    if (typeof name !== 'string') return { ok: false, problem: 'require_signature.bots holds a non-string' };
    const known = policyBotName(name);
    if (known) policy.requireSignature.bots.push(known.name);
    else skipped.push(`bot "${name.slice(0, 40)}"`);
  }
  return { ok: true, version, policy, skipped, unknownActions };
}

/** The stored policy with the code's entries over it, key by key (see the top of this file). */
export function mergeBotPolicies(stored: BotPolicy, code: BotPolicy | undefined): BotPolicy {
  if (!code) return stored;
  const codeBots = Object.entries(code.bots ?? {});
  const codeNames = new Set(codeBots.map(([name]) => name.toLowerCase()));
  const bots: Record<string, BotAction> = {};
  for (const [name, action] of Object.entries(stored.bots ?? {}))
    if (!codeNames.has(name.toLowerCase())) bots[name] = action;
  for (const [name, action] of codeBots) bots[name] = action;
  return {
    categories: { ...stored.categories, ...code.categories },
    bots,
    requireSignature: {
      categories: [
        ...new Set([...(stored.requireSignature?.categories ?? []), ...(code.requireSignature?.categories ?? [])]),
      ],
      bots: unionIgnoringCase(stored.requireSignature?.bots ?? [], code.requireSignature?.bots ?? []),
    },
  };
}

function unionIgnoringCase(first: readonly string[], second: readonly string[]): string[] {
  const seen = new Map<string, string>();
  for (const name of [...first, ...second]) if (!seen.has(name.toLowerCase())) seen.set(name.toLowerCase(), name);
  return [...seen.values()];
}
