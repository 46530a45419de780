/*
 * Fastify: `await app.register(crawlgateFastify, options)`. An onRequest hook on the whole app:
 * the plugin skips Fastify's encapsulation (what fastify-plugin does), so routes registered in
 * sibling plugins are gated too, when it is registered on the root instance: inside a plugin of
 * the app's own, it gates that plugin's routes only (the README says so).
 */

import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { createCrawlgate, type CrawlgateOptions } from '../crawlgate';
import type { Decision } from '../decision';
import { nodeHeaders } from '../request-headers';
import { createClientAddress } from './client-address';
import { FrameworkGateRequest } from './framework-gate-request';
import { keepPaidAnswerHeaders } from './paid-answer';
import { withNodeKeyDirectoryFetch } from '../web-bot-auth/node-directory-fetch';
import { recordWrittenTargets, writtenTarget } from './written-target';

export async function crawlgateFastify(fastify: FastifyInstance, options: CrawlgateOptions): Promise<void> {
  // The router's leniency is not read from the app: Fastify applies top-level caseSensitive and
  // ignoreTrailingSlash beside routerOptions, and neither initialConfig reading tells which won.
  // Lenient unless options.routing says otherwise.
  const gate = createCrawlgate(withNodeKeyDirectoryFetch(options));
  fastify.addHook('onClose', () => gate.close());
  recordWrittenTargets(fastify.server);
  const addressOf = createClientAddress(options.logger ?? console, 'fastify');
  // A callback hook, not an async one: a decision that needs no I/O (a person, a token, a 402) costs no promise.
  fastify.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const decision = gate.handleNow(
      new FrameworkGateRequest(
        request.method,
        // The URL as the client wrote it, and the one routed after rewriteUrl.
        writtenTarget(request.raw) ?? request.originalUrl ?? request.url,
        request.url,
        nodeHeaders(request.headers),
        request,
        addressOf,
      ),
    );
    if (decision instanceof Promise) decision.then((settled) => answer(settled, reply, done)).catch(done);
    else answer(decision, reply, done);
  });
}

/** The gate's own answer (the route never runs; done is not called), or on to the route with the gate's headers. */
function answer(decision: Decision, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  if (decision.kind === 'respond') {
    reply.code(decision.status).headers(decision.headers).send(decision.body);
    return;
  }
  // Reply headers set now are sent with the route's answer, and set again over the route's own as it goes out.
  if (decision.kind === 'pass-after-payment') {
    reply.headers(decision.headers);
    keepPaidAnswerHeaders(reply.raw, decision.headers);
  }
  done();
}

Object.assign(crawlgateFastify, {
  [Symbol.for('skip-override')]: true,
  [Symbol.for('fastify.display-name')]: 'crawlgate',
});
