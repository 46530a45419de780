import { utf8Decode } from '@crawlgate/core';
import type { FastifyInstance } from 'fastify';
import { badRequest } from './api-error';
import { firstInexactNumber } from './exact-json-numbers';

/**
 * Fastify's own JSON parser, fed only bodies that are valid UTF-8. Left to itself it decodes the
 * bytes leniently, and a byte that is not UTF-8 would reach a handler as U+FFFD, silently.
 */
export function parseJsonBodiesAsStrictUtf8(fastify: FastifyInstance): void {
  const { onProtoPoisoning, onConstructorPoisoning } = fastify.initialConfig;
  const parseJson = fastify.getDefaultJsonParser(onProtoPoisoning ?? 'error', onConstructorPoisoning ?? 'error');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const text = utf8Decode(body as Buffer);
    if (text === null) return done(badRequest('Request body is not valid UTF-8'), undefined);
    // Callback style: the parser answers through done, whatever it returns.
    void parseJson(request, text, (error: Error | null, parsed?: unknown) => {
      if (error) return done(error, undefined);
      const inexact = firstInexactNumber(text);
      if (inexact !== undefined)
        return done(
          // Not quoted: it may be a secret sent as a number (a password of digits, say).
          badRequest(
            `A number of ${inexact.length} characters in the request body is not exactly what a JSON reader keeps of it: send it as a string`,
          ),
          undefined,
        );
      done(null, parsed);
    });
  });
}
