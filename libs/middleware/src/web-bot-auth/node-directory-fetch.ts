/*
 * The key directory fetch on Node: through publicAddressFetch, so the directory host's name is
 * resolved here, every address it resolves to must be public, and the connection goes to the
 * address that was checked. A client picks the Signature-Agent origin; without this, a public name
 * of its choosing would make the publisher's server send requests into its own network.
 *
 * Node-only (node:dns, node:http, node:https): the Express, Fastify and NestJS adapters use it by
 * default. Edge runtimes resolve names themselves and cannot check them; refusedOrigin still
 * refuses IP literals there.
 */

import { publicAddressFetch, type PublicAddressFetchOptions } from '../public-network/public-address-fetch';
import type { WebBotAuthOptions } from './index';

export interface NodeKeyDirectoryFetchOptions extends PublicAddressFetchOptions {
  /** Tests only: loopback addresses may be reached (with webBotAuth.allowLoopbackDirectories). */
  allowLoopback?: boolean;
}

/** Who asks, for the agent operator's logs. */
export const KEY_DIRECTORY_USER_AGENT = 'Crawlgate-Middleware (Web Bot Auth key directory)';

/** A fetch for key directories (GET, no redirects followed) that reaches public addresses only. */
export function nodeKeyDirectoryFetch(options: NodeKeyDirectoryFetchOptions = {}): typeof fetch {
  const fetchPublic = publicAddressFetch(options);
  return (input, init) =>
    fetchPublic(input, {
      signal: init?.signal,
      headers: { 'user-agent': KEY_DIRECTORY_USER_AGENT, ...Object.fromEntries(new Headers(init?.headers)) },
      method: 'GET',
      redirect: 'manual',
    });
}

/** The options with key directories fetched by nodeKeyDirectoryFetch, unless they name a fetch of their own. */
export function withNodeKeyDirectoryFetch<T extends { webBotAuth?: WebBotAuthOptions }>(options: T): T {
  if (options.webBotAuth?.fetch) return options;
  const allowLoopback = options.webBotAuth?.allowLoopbackDirectories === true;
  return { ...options, webBotAuth: { ...options.webBotAuth, fetch: nodeKeyDirectoryFetch({ allowLoopback }) } };
}
