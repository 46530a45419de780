/*
 * Node-only helpers for adapters that run anywhere: with Hono on @hono/node-server, pass
 * `webBotAuth: { fetch: nodeKeyDirectoryFetch() }` so key directory hosts are resolved and checked
 * (the Express, Fastify and NestJS adapters do it already). publicAddressFetch is the fetch under
 * it, for any request to a URL someone else picked: it reaches public addresses only.
 */

export { nodeKeyDirectoryFetch, type NodeKeyDirectoryFetchOptions } from '../web-bot-auth/node-directory-fetch';
export {
  PrivateAddressError,
  publicAddressFetch,
  type PublicAddressFetchOptions,
} from '../public-network/public-address-fetch';
