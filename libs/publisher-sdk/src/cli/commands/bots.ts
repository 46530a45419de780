import {
  BOT_ACTIONS,
  BOT_CATEGORIES,
  isBotAction,
  UNKNOWN_AUTOMATION,
  UNKNOWN_CRAWLER,
  unverifiedAllowWarning,
} from '@crawlgate/core';
import type { SiteBotPolicy } from '../../types';
import { print, type Command } from '../command';
import { UsageError } from '../errors';
import { openSite, SITE_HELP } from '../site-ref';
import { table } from '../table';

const NAME_HELP =
  '<name> is the crawler as the middleware\'s catalogue names it, in any case (GPTBot, ClaudeBot, Googlebot, "Yahoo! Slurp"), or unknown-crawler / unknown-automation.';
const APPLIED =
  'the middleware applies it on its next refresh (within 30 s); a `policy` option in its code that names this crawler still wins';

export const botsSet: Command = {
  name: 'bots set',
  usage: `<site> <name> <${BOT_ACTIONS.join('|')}>`,
  summary: "Set one crawler's action on a site: allow, charge or block (the stored bot policy)",
  help: [NAME_HELP, SITE_HELP, `The rest of the policy stays; ${APPLIED}. --json prints the whole policy.`].join('\n'),
  options: {},
  positionals: ['site', 'name', 'action'],
  async run(input) {
    const [, name, action] = input.args;
    if (!isBotAction(action))
      throw new UsageError(`The action is one of ${BOT_ACTIONS.join(', ')}; got ${JSON.stringify(action)}`, 'bots set');
    const { client, siteId } = await openSite(input);
    const policy = await client.setBotAction(siteId, name, action);
    const stored = storedName(policy, name);
    print(input, policy, () => `${stored} on ${input.args[0]}: ${action}; ${APPLIED}.\n`);
    // On stderr, so that --json output stays the API's answer alone.
    const warning = action === 'allow' ? (unverifiedAllowWarning(stored) ?? groupAllowWarning(stored)) : null;
    if (warning) input.io.stderr(`Warning: ${warning}.\n`);
  },
};

export const botsReset: Command = {
  name: 'bots reset',
  usage: '<site> <name>',
  summary: "Remove one crawler's own action on a site: its category's (or the default) applies again",
  help: [NAME_HELP, SITE_HELP, '--json prints the whole policy.'].join('\n'),
  options: {},
  positionals: ['site', 'name'],
  async run(input) {
    const [, name] = input.args;
    const { client, siteId } = await openSite(input);
    const policy = await client.removeBotAction(siteId, name);
    print(input, policy, () => `${name} on ${input.args[0]}: no action of its own; ${effectiveNote(policy)}.\n`);
  },
};

/** Allowing one of the two groups lets in every visitor it holds, whatever it calls itself. */
function groupAllowWarning(name: string): string | null {
  if (name === UNKNOWN_CRAWLER) return 'Allowed: every crawler the gate cannot name gets your pages free';
  if (name === UNKNOWN_AUTOMATION)
    return 'Allowed: every agent the gate cannot name (scripts, unknown signers, no User-Agent) gets your pages free';
  return null;
}

/** The catalogue's spelling of `name`, as the API stored it. */
function storedName(policy: SiteBotPolicy, name: string): string {
  return Object.keys(policy.bots).find((key) => key.toLowerCase() === name.toLowerCase()) ?? name;
}

function effectiveNote(policy: SiteBotPolicy): string {
  return `its category's action applies (${BOT_CATEGORIES.map((category) => `${category} ${policy.categories[category] ?? policy.defaults[category]}`).join(', ')})`;
}

/** The stored bot policy as `policy show` prints it: each category's action, then each crawler's own. */
export function botPolicyText(policy: SiteBotPolicy): string {
  const categories = table(
    ['Category', 'Action'],
    BOT_CATEGORIES.map((category) => [
      category,
      policy.categories[category] ?? `${policy.defaults[category]} (default)`,
    ]),
  );
  const bots = Object.entries(policy.bots);
  const crawlers =
    bots.length === 0
      ? 'No crawler has an action of its own (`crawlgate bots set <site> <name> <action>`).\n'
      : table(['Crawler', 'Action'], bots);
  const { categories: signedCategories, bots: signedBots } = policy.require_signature;
  const signed = [...signedCategories.map((category) => `category ${category}`), ...signedBots];
  const signature = signed.length === 0 ? '' : `Must sign (Web Bot Auth): ${signed.join(', ')}\n`;
  return [
    `Bot policy, version ${policy.version}, updated ${policy.updated_at ?? 'never'}:\n`,
    categories,
    crawlers,
    signature,
  ]
    .join('\n')
    .replace(/\n+$/, '\n');
}
