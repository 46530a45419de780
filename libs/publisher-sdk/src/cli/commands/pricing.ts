import type { Pricing } from '../../types';
import { print, stringValue, type Command } from '../command';
import { UsageError } from '../errors';
import { readPricingFile } from '../pricing-file';
import { openSite, SITE_HELP } from '../site-ref';
import { fields, table } from '../table';

export const PRICING_FILE_HELP = [
  'The file holds {default_price_usd, rules: [{path, price_usd}, …]}; `--file -` reads it from',
  'standard input. Rules are ordered, the first match wins, and `*` matches within one path',
  'segment. Prices are USD from 0 to 1, at most 6 decimals; "0" is free. YAML files may use block',
  'mappings and lists, quoted or plain scalars and # comments (no anchors, flow collections or',
  'multi-line strings). Example (pricing.yaml):',
  '',
  '  default_price_usd: "0.002"',
  '  rules:',
  '    - path: /articles/*',
  '      price_usd: "0.01"',
  '    - path: /about',
  '      price_usd: "0"',
].join('\n');

export const pricingSet: Command = {
  name: 'pricing set',
  usage: '<site> --file <pricing.json|pricing.yaml|->',
  summary: "Replace a site's default price and rules from a file",
  help: `${PRICING_FILE_HELP}\n${SITE_HELP}`,
  options: { file: { type: 'string', short: 'f' } },
  positionals: ['site'],
  async run(input) {
    const file = stringValue(input.values, 'file');
    if (file === undefined) throw new UsageError('--file <pricing.json|pricing.yaml|-> is required', 'pricing set');
    const pricing = await readPricingFile(file, input.io);
    const { client, siteId } = await openSite(input);
    const applied = await client.setPricing(siteId, pricing);
    print(
      input,
      applied,
      () =>
        `Pricing of ${input.args[0]} replaced: ${applied.rules_applied} rule${applied.rules_applied === 1 ? '' : 's'} applied.\n`,
    );
  },
};

export const pricingShow: Command = {
  name: 'pricing show',
  usage: '<site>',
  summary: "Show a site's default price and rules",
  help: SITE_HELP,
  options: {},
  positionals: ['site'],
  async run(input) {
    const { client, siteId } = await openSite(input);
    const pricing = await client.getPricing(siteId);
    print(
      input,
      pricing,
      () =>
        fields([
          ['Site', pricing.site_id],
          ['Default USD', pricing.default_price_usd],
          ['Version', String(pricing.version)],
          ['Updated', pricing.updated_at ?? 'never'],
        ]) + `\n${rulesTable(pricing)}`,
    );
  },
};

/** The rules in order, numbered as the API numbers the winning rule. */
export function rulesTable(pricing: Pricing): string {
  if (pricing.rules.length === 0) return 'No rules: every path costs the default.\n';
  return table(
    ['#', 'PATH', 'USD'],
    pricing.rules.map((rule, i) => [String(i), rule.path, rule.price_usd]),
  );
}
