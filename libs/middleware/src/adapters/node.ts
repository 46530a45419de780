/*
 * Node-only helpers for adapters that run anywhere: with Hono on @hono/node-server, pass
 * `webBotAuth: { fetch: nodeKeyDirectoryFetch() }` so key directory hosts are resolved and checked
 * (the Express, Fastify and NestJS adapters do it already).
 */

export { nodeKeyDirectoryFetch, type NodeKeyDirectoryFetchOptions } from '../web-bot-auth/node-directory-fetch';
