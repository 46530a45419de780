import {
  BOT_CATEGORIES,
  botActionProblem,
  botNameProblem,
  botPolicyInputProblems,
  DEFAULT_CATEGORY_ACTIONS,
  DEFAULT_CATEGORY_ACTIONS_VERSION,
  normalizeBotPolicy,
  policyBotName,
  type BotAction,
  type BotPolicyInput,
  type BotPolicyOffer,
  type BotPolicyRules,
  type SiteBotPolicy,
  type ValidationItem,
} from '@crawlgate/core';
import { Inject, Injectable } from '@nestjs/common';
import type { Database } from '../db/database';
import { DATABASE } from '../db/tokens';
import { ValidationFailed } from '../http/validation-items';
import {
  readBotPolicy,
  removeBotAction,
  replaceBotPolicy,
  setBotAction,
  type StoredBotPolicy,
} from './bot-policy.store';

/**
 * A site's bot policy: checked with core's rules (so the API stores only what the middleware
 * applies), stored whole or one crawler at a time, and shown with the middleware's defaults.
 */
@Injectable()
export class BotPolicyService {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async view(siteId: string): Promise<SiteBotPolicy> {
    return this.answer(siteId, await readBotPolicy(this.db.sql, siteId));
  }

  /**
   * What GET /v1/site carries for the site's middleware: every category, the site's own action
   * else today's default (named in `default_categories`), so that a middleware of an older version,
   * whose own defaults may be older (SEO crawlers were allowed before 2026-11-29), applies the
   * defaults the dashboard shows. The version counts the defaults' too: a running gate re-reads.
   */
  async offer(siteId: string): Promise<BotPolicyOffer> {
    const stored = await readBotPolicy(this.db.sql, siteId);
    const rules = ordered(stored);
    return {
      ...rules,
      categories: Object.fromEntries(
        BOT_CATEGORIES.map((category) => [category, rules.categories[category] ?? DEFAULT_CATEGORY_ACTIONS[category]]),
      ),
      default_categories: BOT_CATEGORIES.filter((category) => rules.categories[category] === undefined),
      version: (stored?.version ?? 0) + DEFAULT_CATEGORY_ACTIONS_VERSION,
    };
  }

  /** `body` passed the DTO's shape checks only; core's checks decide the rest. */
  async replace(siteId: string, body: BotPolicyInput): Promise<SiteBotPolicy> {
    const problems = botPolicyInputProblems(body);
    if (problems.length > 0)
      throw new ValidationFailed(problems.map((item) => ({ ...item, loc: ['body', ...item.loc] })));
    return this.answer(siteId, await replaceBotPolicy(this.db.sql, siteId, normalizeBotPolicy(body)));
  }

  async setBot(siteId: string, name: string, action: unknown): Promise<SiteBotPolicy> {
    const canonical = checkedName(name);
    const problem = action === undefined ? missingAction() : botActionProblem(action, ['body', 'action']);
    if (problem) throw new ValidationFailed([problem]);
    return this.answer(siteId, await setBotAction(this.db.sql, siteId, canonical, action as BotAction));
  }

  async removeBot(siteId: string, name: string): Promise<SiteBotPolicy> {
    return this.answer(siteId, await removeBotAction(this.db.sql, siteId, checkedName(name)));
  }

  private answer(siteId: string, stored: StoredBotPolicy | null): SiteBotPolicy {
    return {
      site_id: siteId,
      ...ordered(stored),
      defaults: { ...DEFAULT_CATEGORY_ACTIONS },
      version: stored?.version ?? 0,
      updated_at: stored?.updatedAt.toISOString() ?? null,
    };
  }
}

/** In catalogue order (PostgreSQL's jsonb keeps its own). */
function ordered(stored: StoredBotPolicy | null): BotPolicyRules {
  return normalizeBotPolicy(stored?.rules ?? {});
}

/** The catalogue's spelling of a path's `{name}`, or 422. */
function checkedName(name: string): string {
  const problem = botNameProblem(name, ['path', 'name']);
  if (problem) throw new ValidationFailed([problem]);
  return policyBotName(name)!.name;
}

function missingAction(): ValidationItem {
  return { loc: ['body', 'action'], msg: 'action is required: "allow", "charge" or "block"', type: 'missing' };
}
