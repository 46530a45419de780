import type { PriceRuleInput, PricingInput } from '../../types';
import { print, stringList, stringValue, type Command } from '../command';
import { UsageError } from '../errors';
import { readPricingFile } from '../pricing-file';
import { openSite, SITE_HELP } from '../site-ref';
import { fields } from '../table';
import { botPolicyText } from './bots';
import { PRICING_FILE_HELP, rulesTable } from './pricing';

const NO_PAYOUT = 'none: bots that must pay cannot, until you run `crawlgate payout set <address>`';

export const policyShow: Command = {
  name: 'policy show',
  usage: '<site> [--path <path>]',
  summary: 'What a bot pays on a site: default price, rules, payout address, bot policy; --path prices one path',
  help: [
    SITE_HELP,
    '--path <path> names the rule that wins for that path (or URL) and its price.',
    'The bot policy is the one stored in the API (set with `crawlgate bots set`, or in the',
    "dashboard): each category's action, each crawler's own; a `policy` option in the middleware's",
    'code wins for the categories and crawlers it names. --json prints {site_id, domain,',
    'default_price_usd, rules, version, updated_at, payout_address, bot_policy, resolved (with --path)}.',
  ].join('\n'),
  options: { path: { type: 'string' } },
  positionals: ['site'],
  async run(input) {
    const { client, siteId } = await openSite(input);
    const path = stringValue(input.values, 'path');
    const [site, pricing, me, botPolicy, resolved] = await Promise.all([
      client.getSite(siteId),
      client.getPricing(siteId),
      client.me(),
      client.getBotPolicy(siteId),
      path === undefined ? undefined : client.resolvePrice(siteId, path),
    ]);
    const { site_id: _siteId, ...bot_policy } = botPolicy;
    const policy = {
      ...pricing,
      domain: site.domain,
      payout_address: me.payout_address,
      bot_policy,
      ...(resolved ? { resolved } : {}),
    };
    print(input, policy, () => {
      const summary = fields([
        ['Site', `${site.site_id} (${site.domain})`],
        ['Default USD', pricing.default_price_usd],
        ['Version', `${pricing.version}, updated ${pricing.updated_at ?? 'never'}`],
        ['Payout address', me.payout_address ?? NO_PAYOUT],
      ]);
      const winner =
        resolved &&
        `Path ${resolved.path}: ${resolved.price_usd} USD (${resolved.rule === null ? 'the default' : `rule ${resolved.rule}, ${resolved.pattern}`})\n`;
      return [summary, rulesTable(pricing), ...(winner ? [winner] : []), botPolicyText(botPolicy)].join('\n');
    });
  },
};

export const policySet: Command = {
  name: 'policy set',
  usage: '<site> [--default <usd>] [--rule <glob>=<usd>]... [--clear-rules] | --file <file|->',
  summary: "Change a site's default price or rules from the command line (or replace both from a file)",
  help: [
    '--default <usd> sets the default price and keeps the rules; --rule <glob>=<usd>, repeated in',
    'order, replaces every rule (the first match wins); --clear-rules removes them all. Without',
    '--default the current default stays. Example:',
    '',
    '  crawlgate policy set news.example.com --default 0.002 --rule "/articles/*=0.01" --rule "/about=0"',
    '',
    'With --file it does what `crawlgate pricing set` does:',
    PRICING_FILE_HELP,
    SITE_HELP,
  ].join('\n'),
  options: {
    default: { type: 'string' },
    rule: { type: 'string', multiple: true },
    'clear-rules': { type: 'boolean' },
    file: { type: 'string', short: 'f' },
  },
  positionals: ['site'],
  async run(input) {
    const { values } = input;
    const file = stringValue(values, 'file');
    const defaultPrice = stringValue(values, 'default');
    const rules = stringList(values, 'rule').map(parseRule);
    const clearRules = values['clear-rules'] === true;
    if (file !== undefined && (defaultPrice !== undefined || rules.length > 0 || clearRules)) {
      throw new UsageError(
        '--file replaces the whole pricing: give it alone, or use --default/--rule/--clear-rules',
        'policy set',
      );
    }
    if (clearRules && rules.length > 0)
      throw new UsageError('--clear-rules and --rule contradict each other', 'policy set');
    if (file === undefined && defaultPrice === undefined && rules.length === 0 && !clearRules) {
      throw new UsageError('Nothing to set: give --default, --rule, --clear-rules or --file', 'policy set');
    }

    const fromFile = file === undefined ? undefined : await readPricingFile(file, input.io);
    const { client, siteId } = await openSite(input);
    let pricing: PricingInput;
    if (fromFile) pricing = fromFile;
    else {
      // The API replaces default and rules together; what was not asked to change is sent back as is.
      const current = await client.getPricing(siteId);
      pricing = {
        default_price_usd: defaultPrice ?? current.default_price_usd,
        rules: clearRules ? [] : rules.length > 0 ? rules : current.rules,
      };
    }
    const applied = await client.setPricing(siteId, pricing);
    print(
      input,
      applied,
      () =>
        `Policy of ${input.args[0]} set: default ${pricing.default_price_usd} USD, ${applied.rules_applied} rule${applied.rules_applied === 1 ? '' : 's'}.\n`,
    );
  },
};

/** `/articles/*=0.01`: split at the last `=`, since a price never holds one and a path might. */
function parseRule(text: string): PriceRuleInput {
  const at = text.lastIndexOf('=');
  if (at <= 0 || at === text.length - 1)
    throw new UsageError(
      `--rule takes <glob>=<usd>, e.g. "/articles/*=0.01"; got ${JSON.stringify(text)}`,
      'policy set',
    );
  return { path: text.slice(0, at), price_usd: text.slice(at + 1) };
}
