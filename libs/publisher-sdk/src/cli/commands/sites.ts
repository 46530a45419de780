import { createInterface } from 'node:readline/promises';
import { print, stringValue, type Command } from '../command';
import { CliError, UsageError } from '../errors';
import type { CliIo } from '../io';
import { authedClient } from '../session';
import { openSite, SITE_HELP } from '../site-ref';
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
    print(
      input,
      site,
      () =>
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
            sites.items.map((site) => [
              site.site_id,
              site.domain,
              site.name ?? '',
              site.default_price_usd,
              String(site.rules_count),
              site.created_at,
            ]),
          ),
    );
  },
};

export const sitesRotateToken: Command = {
  name: 'sites rotate-token',
  usage: '<site>',
  summary: 'Issue a new site token; the previous one stops working at once',
  help: SITE_HELP,
  options: {},
  positionals: ['site'],
  async run(input) {
    const { client, siteId } = await openSite(input);
    const rotated = await client.rotateSiteToken(siteId);
    print(
      input,
      rotated,
      () =>
        `New site token for ${rotated.site_id} (the previous one no longer works; update your middleware):\n  ${rotated.site_token}\n`,
    );
  },
};

export const sitesRotateSecret: Command = {
  name: 'sites rotate-secret',
  usage: '<site> [--grace-seconds <n>]',
  summary: 'Issue a new access-token secret; the previous one verifies for a grace period',
  help: [
    '--grace-seconds <n>: how long tokens signed with the previous secret keep verifying; 0 revokes',
    "it at once (a leaked secret). Default and most: the API's SECRET_GRACE_SECONDS (3600 unless",
    'configured). Only the newest previous secret is ever in grace. Give the middleware the new',
    'secret (and the previous one, until the grace ends).',
    SITE_HELP,
  ].join('\n'),
  options: { 'grace-seconds': { type: 'string' } },
  positionals: ['site'],
  async run(input) {
    const grace = stringValue(input.values, 'grace-seconds');
    if (grace !== undefined && !/^\d{1,9}$/.test(grace))
      throw new UsageError(
        `--grace-seconds takes a whole number of seconds, got ${JSON.stringify(grace)}`,
        'sites rotate-secret',
      );
    const { client, siteId } = await openSite(input);
    const rotated = await client.rotateSecret(siteId, {
      graceSeconds: grace === undefined ? undefined : Number(grace),
    });
    const previous =
      rotated.previous_valid_until === null
        ? 'The previous secret no longer verifies.'
        : `The previous secret (${rotated.previous_kids.join(', ')}) verifies until ${rotated.previous_valid_until}.`;
    print(
      input,
      rotated,
      () =>
        `New access-token secret for ${rotated.site_id}, shown only now (update your middleware):\n` +
        fields([
          ['  access-token secret', rotated.access_token_secret],
          ['  key id', rotated.kid],
        ]) +
        `${previous}\n`,
    );
  },
};

export const sitesDelete: Command = {
  name: 'sites delete',
  usage: '<site> [--yes]',
  summary: 'Delete a site: its site token and secret stop working; its payments are kept',
  help: `Asks to type the domain on a terminal; --yes skips that (needed off a terminal).\n${SITE_HELP}`,
  options: { yes: { type: 'boolean', short: 'y' } },
  positionals: ['site'],
  async run(input) {
    const { client, siteId } = await openSite(input);
    if (input.values.yes !== true) await confirmDeletion(input.io, (await client.getSite(siteId)).domain);
    const deleted = await client.deleteSite(siteId);
    print(
      input,
      deleted,
      () =>
        `Deleted site ${deleted.site_id}. Its site token and access-token secret no longer work; its payments are kept.\n`,
    );
  },
};

/** Deleting cannot be undone: on a terminal the domain must be typed back; elsewhere --yes is required. */
async function confirmDeletion(io: CliIo, domain: string): Promise<void> {
  if (!io.stdin?.isTTY)
    throw new UsageError(
      'Deleting a site cannot be undone: pass --yes to confirm (or run on a terminal to be asked)',
      'sites delete',
    );
  const prompt = createInterface({ input: io.stdin, terminal: false });
  // An input that ends unanswered (Ctrl-D) settles no question: the process would exit 0, deleting nothing.
  let answered = false;
  const ended = new Promise<never>((_, reject) =>
    prompt.once('close', () => answered || reject(new CliError('Not deleted: no answer'))),
  );
  try {
    io.stderr(`Delete ${domain}? Its middleware stops working at once. Type the domain to confirm: `);
    const answer = await Promise.race([prompt.question(''), ended]);
    answered = true;
    if (answer.trim().toLowerCase() !== domain) throw new CliError('Not deleted: the domain typed did not match');
  } finally {
    prompt.close();
  }
}
