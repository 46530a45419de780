/*
 * The bot policy: what a site does with each kind of crawler (allow, charge, block), per category
 * and per catalogued bot, and which of them must sign their requests (Web Bot Auth). The words,
 * the defaults, the wire shapes of the API (GET/PUT /v1/sites/{id}/bot-policy, and `bot_policy` in
 * GET /v1/site) and their validation live here once: the API stores what passes these checks, the
 * middleware applies it, the SDK and the dashboard edit it.
 *
 * Categories say what a crawler does with a page, because that is what a site owner prices:
 * training a model, answering one user's question, indexing for search.
 */

import type { ValidationItem } from './api-errors';
import { policyBotName, type PolicyBotName } from './bot-catalogue';

export const BOT_CATEGORIES = [
  'ai-training',
  'ai-assistant',
  'ai-search',
  'search-engine',
  'seo',
  'social-preview',
  'automation',
] as const;
export type BotCategory = (typeof BOT_CATEGORIES)[number];

export const BOT_ACTIONS = ['allow', 'charge', 'block'] as const;
export type BotAction = (typeof BOT_ACTIONS)[number];

/*
 * Defaults follow what publishers ask of pay-per-crawl: AI crawlers pay, whatever the purpose; so
 * does anything that hides what it is. Crawlers that send readers back (search engines) or draw a
 * link card where someone shared the page (social previews) pass.
 *
 * SEO crawlers pay: anyone can run Screaming Frog or Sitebulb (whose custom extraction keeps a
 * page's text) against any site, and anyone can send a User-Agent of theirs, so letting them pass
 * gave pages away. They were allowed before 2026-11-29, as the owner's own tools; an owner who
 * audits with them allows them with one click (or `categories: { seo: 'allow' }`).
 */
export const DEFAULT_CATEGORY_ACTIONS: Readonly<Record<BotCategory, BotAction>> = Object.freeze({
  'ai-training': 'charge',
  'ai-assistant': 'charge',
  'ai-search': 'charge',
  'search-engine': 'allow',
  seo: 'charge',
  'social-preview': 'allow',
  automation: 'charge',
});

/**
 * Raised with every change of DEFAULT_CATEGORY_ACTIONS (1: SEO crawlers charged, 2026-11-29). GET
 * /v1/site's `bot_policy.version` adds it to the stored policy's, so that a running gate, which
 * re-reads the policy only when its version moves, picks up new defaults.
 */
export const DEFAULT_CATEGORY_ACTIONS_VERSION = 1;

/** How strict each action is: a gate that must choose between two takes the stricter. */
const STRICTNESS: Readonly<Record<BotAction, number>> = { allow: 0, charge: 1, block: 2 };

export function stricterAction(a: BotAction, b: BotAction): BotAction {
  return STRICTNESS[a] >= STRICTNESS[b] ? a : b;
}

/** The most entries a stored policy's `bots` (and `require_signature.bots`) may hold. */
export const MAX_POLICY_BOTS = 500;

/** Which crawlers must carry a valid Web Bot Auth signature; an unsigned request of one is never allowed. */
export interface RequireSignature {
  categories: BotCategory[];
  /** Catalogue names. */
  bots: string[];
}

/** PUT /v1/sites/{id}/bot-policy: replaces the whole policy; what is left out is cleared. */
export interface BotPolicyInput {
  categories?: Partial<Record<BotCategory, BotAction>>;
  /** Keyed by catalogue name (any case; stored as the catalogue spells it). */
  bots?: Record<string, BotAction>;
  require_signature?: { categories?: BotCategory[]; bots?: string[] };
}

/** PUT /v1/sites/{id}/bot-policy/bots/{name}: one crawler's action. */
export interface SetBotActionInput {
  action: BotAction;
}

/** A stored policy's rules: empty objects and lists when nothing is set. */
export interface BotPolicyRules {
  categories: Partial<Record<BotCategory, BotAction>>;
  bots: Record<string, BotAction>;
  require_signature: RequireSignature;
}

/** `bot_policy` of GET /v1/site: what the site's middleware applies; `version` increases with every change. */
export interface BotPolicyOffer extends BotPolicyRules {
  /**
   * The categories `categories` fills with the API's defaults (the site sets none there). A gate
   * whose own defaults are newer takes the stricter of the two; one that does not know the field
   * applies the API's, so old gates follow new category defaults (a crawler's category is still
   * their own catalogue's).
   */
  default_categories?: BotCategory[];
  /** The stored policy's version plus DEFAULT_CATEGORY_ACTIONS_VERSION. */
  version: number;
}

/** GET /v1/sites/{id}/bot-policy (and the answer of every change to it). */
export interface SiteBotPolicy extends BotPolicyRules {
  site_id: string;
  /** The middleware's action per category where the policy sets none, so a client can show the effective action. */
  defaults: Record<BotCategory, BotAction>;
  /** 0 until the policy is first set; increases with every change. */
  version: number;
  updated_at: string | null;
}

export function isBotAction(value: unknown): value is BotAction {
  return (BOT_ACTIONS as readonly unknown[]).includes(value);
}

export function isBotCategory(value: unknown): value is BotCategory {
  return (BOT_CATEGORIES as readonly unknown[]).includes(value);
}

type Loc = (string | number)[];

const ACTION_MESSAGE = `use ${BOT_ACTIONS.map((action) => `"${action}"`).join(', ')}`;

/** Why `value` is not an action; null when it is one. */
export function botActionProblem(value: unknown, loc: Loc): ValidationItem | null {
  if (isBotAction(value)) return null;
  return {
    loc,
    msg: `${JSON.stringify(value) ?? 'nothing'} is not an action: ${ACTION_MESSAGE}`,
    type: 'enum',
    input: value ?? null,
    ctx: { expected: BOT_ACTIONS },
  };
}

/** Why `name` names no crawler a policy can apply to; null when it names one. */
export function botNameProblem(name: unknown, loc: Loc): ValidationItem | null {
  if (typeof name !== 'string')
    return { loc, msg: 'A bot is named by a string', type: 'string_type', input: name ?? null };
  const known = policyBotName(name);
  if (!known)
    return {
      loc,
      msg: `"${name.slice(0, 80)}" is no bot of the catalogue (nor unknown-crawler or unknown-automation)`,
      type: 'bot_name',
      input: name,
    };
  if (known.robotsTxtOnly) {
    return {
      loc,
      msg: `${known.name} is a robots.txt token that no crawler sends as its User-Agent, so a policy for it never applies`,
      type: 'bot_robots_txt_only',
      input: name,
    };
  }
  return null;
}

function categoryProblem(name: unknown, loc: Loc): ValidationItem | null {
  if (isBotCategory(name)) return null;
  return {
    loc,
    msg: `${JSON.stringify(name)} is no category: use ${BOT_CATEGORIES.join(', ')}`,
    type: 'enum',
    input: name ?? null,
    ctx: { expected: BOT_CATEGORIES },
  };
}

/** A JSON object: not null, not a list. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Everything wrong with a policy as the API takes it (BotPolicyInput), as 422 items with `loc`
 * relative to the body; empty when it is fine. Unknown top-level fields are the caller's business
 * (the API's DTO refuses them); unknown fields of require_signature are refused here.
 */
export function botPolicyInputProblems(input: unknown): ValidationItem[] {
  if (!isPlainObject(input))
    return [{ loc: [], msg: 'A bot policy is a JSON object', type: 'dict_type', input: input ?? null }];
  const problems: ValidationItem[] = [];
  const { categories, bots, require_signature: signature } = input;
  if (categories !== undefined) {
    if (!isPlainObject(categories))
      problems.push({
        loc: ['categories'],
        msg: 'categories is an object of category → action',
        type: 'dict_type',
        input: categories,
      });
    else {
      for (const [category, action] of Object.entries(categories)) {
        const problem =
          categoryProblem(category, ['categories', category]) ?? botActionProblem(action, ['categories', category]);
        if (problem) problems.push(problem);
      }
    }
  }
  if (bots !== undefined) {
    if (!isPlainObject(bots))
      problems.push({
        loc: ['bots'],
        msg: 'bots is an object of catalogue name → action',
        type: 'dict_type',
        input: bots,
      });
    else problems.push(...botMapProblems(bots));
  }
  if (signature !== undefined) {
    if (!isPlainObject(signature)) {
      problems.push({
        loc: ['require_signature'],
        msg: 'require_signature is an object with optional lists "categories" and "bots"',
        type: 'dict_type',
        input: signature,
      });
    } else {
      // A misspelt list here ("categorie") would require no signature of anyone, without a word.
      for (const key of Object.keys(signature))
        if (key !== 'categories' && key !== 'bots')
          problems.push({
            loc: ['require_signature', key],
            msg: 'require_signature holds only the lists "categories" and "bots"',
            type: 'extra_forbidden',
          });
      problems.push(
        ...listProblems(
          signature.categories,
          ['require_signature', 'categories'],
          BOT_CATEGORIES.length,
          categoryProblem,
        ),
      );
      problems.push(...listProblems(signature.bots, ['require_signature', 'bots'], MAX_POLICY_BOTS, botNameProblem));
    }
  }
  return problems;
}

function botMapProblems(bots: Record<string, unknown>): ValidationItem[] {
  const names = Object.keys(bots);
  if (names.length > MAX_POLICY_BOTS) {
    return [
      {
        loc: ['bots'],
        msg: `At most ${MAX_POLICY_BOTS} bots`,
        type: 'too_long',
        input: `${names.length} entries`,
        ctx: { max_length: MAX_POLICY_BOTS },
      },
    ];
  }
  const problems: ValidationItem[] = [];
  const seen = new Map<string, string>();
  for (const name of names) {
    const problem = botNameProblem(name, ['bots', name]) ?? botActionProblem(bots[name], ['bots', name]);
    if (problem) {
      problems.push(problem);
      continue;
    }
    // Names compare in any case, so two spellings of one bot would leave its action to chance.
    const canonical = policyBotName(name)!.name;
    const first = seen.get(canonical);
    if (first !== undefined)
      problems.push({
        loc: ['bots', name],
        msg: `"${name}" and "${first}" name the same bot, ${canonical}`,
        type: 'bot_duplicate',
        input: name,
      });
    else seen.set(canonical, name);
  }
  return problems;
}

function listProblems(
  value: unknown,
  loc: Loc,
  max: number,
  itemProblem: (item: unknown, loc: Loc) => ValidationItem | null,
): ValidationItem[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) return [{ loc, msg: `${loc.join('.')} is a list`, type: 'list_type', input: value }];
  if (value.length > max)
    return [
      {
        loc,
        msg: `At most ${max} entries`,
        type: 'too_long',
        input: `${value.length} entries`,
        ctx: { max_length: max },
      },
    ];
  return value.flatMap((item, index) => itemProblem(item, [...loc, index]) ?? []);
}

/**
 * A valid input (botPolicyInputProblems found nothing) as stored and shown: bots under their
 * catalogue spelling, categories and bots in catalogue order, lists without repeats.
 */
export function normalizeBotPolicy(input: BotPolicyInput): BotPolicyRules {
  const categories: Partial<Record<BotCategory, BotAction>> = {};
  for (const category of BOT_CATEGORIES) {
    const action = input.categories?.[category];
    if (action !== undefined) categories[category] = action;
  }
  const entries = Object.entries(input.bots ?? {}).map(([name, action]) => [known(name), action] as const);
  const bots: Record<string, BotAction> = {};
  for (const [bot, action] of entries.sort(([a], [b]) => a.rank - b.rank)) bots[bot.name] = action;
  const signedCategories = new Set(input.require_signature?.categories ?? []);
  return {
    categories,
    bots,
    require_signature: {
      categories: BOT_CATEGORIES.filter((category) => signedCategories.has(category)),
      bots: [
        ...new Set(
          (input.require_signature?.bots ?? [])
            .map(known)
            .sort((a, b) => a.rank - b.rank)
            .map((bot) => bot.name),
        ),
      ],
    },
  };
}

/** A name the catalogue no longer holds (a policy stored by an older version) keeps its spelling and goes last. */
function known(name: string): Pick<PolicyBotName, 'name' | 'rank'> {
  return policyBotName(name) ?? { name, rank: Number.POSITIVE_INFINITY };
}
