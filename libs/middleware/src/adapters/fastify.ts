/*
 * Fastify: `await app.register(crawlgateFastify, options)`. An onRequest hook on the whole app:
 * the plugin skips Fastify's encapsulation (what fastify-plugin does), so routes registered in
 * sibling plugins are gated too.
 */

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createCrawlgate, type CrawlgateOptions, type RoutingOptions } from '../crawlgate';
import { nodeHmacSha256 } from '../node-hmac';

export async function crawlgateFastify(fastify: FastifyInstance, options: CrawlgateOptions): Promise<void> {
  const gate = createCrawlgate({ ...options, routing: options.routing ?? fastifyRouting(fastify) }, nodeHmacSha256);
  fastify.addHook('onClose', () => gate.close());
  fastify.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const decision = await gate.handle({
      method: request.method,
      url: request.url,
      headers: request.headers,
      ip: request.ip,
    });
    if (decision.kind === 'respond') return reply.code(decision.status).headers(decision.headers).send(decision.body);
    // Reply headers set now are sent with the route's answer.
    if (decision.kind === 'pass-after-payment') reply.headers(decision.headers);
  });
}

/**
 * Fastify 5 keeps its router options in initialConfig.routerOptions when they were given there;
 * given the old way (top level), they are not read here, and the gate prices leniently.
 */
function fastifyRouting(fastify: FastifyInstance): RoutingOptions {
  const router = (
    fastify.initialConfig as { routerOptions?: { caseSensitive?: boolean; ignoreTrailingSlash?: boolean } }
  ).routerOptions;
  if (!router) return {};
  return { caseSensitive: router.caseSensitive !== false, strictTrailingSlash: router.ignoreTrailingSlash !== true };
}

Object.assign(crawlgateFastify, {
  [Symbol.for('skip-override')]: true,
  [Symbol.for('fastify.display-name')]: 'crawlgate',
});
