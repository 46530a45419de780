/*
 * The request target as the client wrote it, recorded as the server emits the request, before any
 * framework sees it. Fastify's rewriteUrl keeps it in the request's originalUrl, but
 * @fastify/middie (Express-style middleware on Fastify, which NestJS registers for its own
 * middleware) sets originalUrl to the rewritten URL: read there, the client's target would be lost
 * and only the rewritten one priced.
 */

import type { EventEmitter } from 'node:events';

const WRITTEN_TARGET = Symbol.for('crawlgate.writtenTarget');

interface Marked {
  [WRITTEN_TARGET]?: unknown;
}

/** Records every request's target on `server` ahead of its other listeners; once per server. */
export function recordWrittenTargets(server: EventEmitter): void {
  const marked = server as EventEmitter & Marked;
  if (marked[WRITTEN_TARGET]) return;
  marked[WRITTEN_TARGET] = true;
  server.prependListener('request', (request: { url?: unknown } & Marked) => {
    if (request[WRITTEN_TARGET] === undefined && typeof request.url === 'string') request[WRITTEN_TARGET] = request.url;
  });
}

/** The target recordWrittenTargets kept for this Node request, if any. */
export function writtenTarget(request: object | undefined): string | undefined {
  const target = (request as Marked | undefined)?.[WRITTEN_TARGET];
  return typeof target === 'string' ? target : undefined;
}
