import { print, stringValue, type Command } from '../command';
import { authedClient } from '../session';
import { fields, table } from '../table';

export const sitesCreate: Command = {
  name: 'sites create',
  usage: '<domain> [--name <name>]',
  summary: 'Register a site; prints its site token and access-token secret (shown once)',
  options: { name: { type: 'string' } },
  positionals: ['domain'],
  async run(input) {
    const client = await authedClient(input.values, input.io);
    const site = await client.createSite({ domain: input.args[0], name: stringValue(input.values, 'name') });
    print(input, site, () =>
      `Created site ${site.site_id} for ${site.domain}. It is free until you set its pricing.\n` +
      'Store these now, they are shown only once (your middleware needs them):\n' +
      fields([
        ['  site token', site.site_token],
        ['  access-token secret', site.access_token_secret],
        ['  key id', site.kid],
      ]),
    );
  },
};

export const sitesList: Command = {
  name: 'sites list',
  usage: '',
  summary: 'List your sites',
  options: {},
  positionals: [],
  async run(input) {
    const client = await authedClient(input.values, input.io);
    const sites = await client.listSites();
    print(input, sites, () =>
      sites.items.length === 0
        ? 'No sites yet. Create one with `crawlgate sites create <domain>`.\n'
        : table(
            ['SITE ID', 'DOMAIN', 'NAME', 'DEFAULT USD', 'RULES', 'CREATED'],
            sites.items.map((site) => [site.site_id, site.domain, site.name ?? '', site.default_price_usd, String(site.rules_count), site.created_at]),
          ),
    );
  },
};

export const sitesRotateToken: Command = {
  name: 'sites rotate-token',
  usage: '<site_id>',
  summary: 'Issue a new site token; the previous one stops working at once',
  options: {},
  positionals: ['site_id'],
  async run(input) {
    const client = await authedClient(input.values, input.io);
    const rotated = await client.rotateSiteToken(input.args[0]);
    print(input, rotated, () => `New site token for ${rotated.site_id} (the previous one no longer works; update your middleware):\n  ${rotated.site_token}\n`);
  },
};
