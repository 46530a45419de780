import { print, stringValue, type Command } from '../command';
import { UsageError } from '../errors';
import { readPricingFile } from '../pricing-file';
import { authedClient } from '../session';
import { fields, table } from '../table';

export const pricingSet: Command = {
  name: 'pricing set',
  usage: '<site_id> --file <pricing.json|pricing.yaml>',
  summary: "Replace a site's default price and rules from a file",
  help: [
    'The file holds {default_price_usd, rules: [{path, price_usd}, …]}; rules are ordered, the first',
    'match wins, and `*` matches within one path segment. Prices are USD from 0 to 1, at most 6',
    'decimals; "0" is free. YAML files may use block mappings and lists, quoted or plain scalars',
    'and # comments (no anchors, flow collections or multi-line strings). Example (pricing.yaml):',
    '',
    '  default_price_usd: "0.002"',
    '  rules:',
    '    - path: /articles/*',
    '      price_usd: "0.01"',
    '    - path: /about',
    '      price_usd: "0"',
  ].join('\n'),
  options: { file: { type: 'string', short: 'f' } },
  positionals: ['site_id'],
  async run(input) {
    const file = stringValue(input.values, 'file');
    if (file === undefined) throw new UsageError('--file <pricing.json|pricing.yaml> is required', 'pricing set');
    const pricing = await readPricingFile(file);
    const client = await authedClient(input.values, input.io);
    const applied = await client.setPricing(input.args[0], pricing);
    print(input, applied, () => `Pricing of ${input.args[0]} replaced: ${applied.rules_applied} rule${applied.rules_applied === 1 ? '' : 's'} applied.\n`);
  },
};

export const pricingShow: Command = {
  name: 'pricing show',
  usage: '<site_id>',
  summary: "Show a site's default price and rules",
  options: {},
  positionals: ['site_id'],
  async run(input) {
    const client = await authedClient(input.values, input.io);
    const pricing = await client.getPricing(input.args[0]);
    print(input, pricing, () => {
      const summary = fields([
        ['Site', pricing.site_id],
        ['Default USD', pricing.default_price_usd],
        ['Version', String(pricing.version)],
        ['Updated', pricing.updated_at ?? 'never'],
      ]);
      const rules = pricing.rules.length === 0 ? 'No rules: every path costs the default.\n' : table(['#', 'PATH', 'USD'], pricing.rules.map((rule, i) => [String(i), rule.path, rule.price_usd]));
      return `${summary}\n${rules}`;
    });
  },
};
