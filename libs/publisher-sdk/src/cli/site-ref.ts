import type { PublisherClient } from '../client';
import type { CommandInput } from './command';
import { authedClient } from './session';

/** Said in the help of every command that takes a <site>. */
export const SITE_HELP = '<site> is the site id or its domain (one of yours: `crawlgate sites list`).';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The id of the site named by `ref`: an id as is, else the id of your site with that domain
 * (a publisher has at most one site per domain). Anything else is passed on as an id, so the
 * API answers it (404 Site not found) as it answers every unknown id.
 */
export async function siteIdOf(client: PublisherClient, ref: string): Promise<string> {
  if (UUID.test(ref)) return ref;
  const domain = ref.trim().toLowerCase().replace(/\.$/, '');
  const { items } = await client.listSites();
  return items.find((site) => site.domain === domain)?.site_id ?? ref;
}

/** For a command whose first argument is a <site>: the client and that site's id. */
export async function openSite(input: CommandInput): Promise<{ client: PublisherClient; siteId: string }> {
  const client = await authedClient(input.values, input.io);
  return { client, siteId: await siteIdOf(client, input.args[0]) };
}
