import type { ApiErrorBody } from '@crawlgate/core';
import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { ThrottlerException } from '@nestjs/throttler';
import type { FastifyReply } from 'fastify';
import { ApiError } from './api-error';
import { isDatabaseUnavailable, isMissingRow } from './database-errors';

/** Fastify's own request errors (body parsing, limits), which reach us before any handler runs. */
const FASTIFY_ERRORS: Record<string, [number, string]> = {
  FST_ERR_CTP_BODY_TOO_LARGE: [413, 'Request body is too large'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, 'Content-Type must be application/json'],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'Request body is empty but Content-Type is application/json'],
  FST_ERR_CTP_INVALID_JSON_BODY: [400, 'Request body is not valid JSON'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'Content-Length does not match the body'],
  FST_ERR_BAD_URL: [400, 'Request URL has a percent-escape that does not decode (not UTF-8, or not %XX)'],
  FST_ERR_MAX_PARAM_LENGTH: [414, 'A path parameter of the request URL is too long'],
};

export interface ErrorAnswer {
  status: number;
  /** `detail` always; some errors add fields (a 402's `reason`). */
  body: ApiErrorBody & Record<string, unknown>;
  headers: Record<string, string>;
}

/** Maps anything thrown to a status and a `{detail}` body; unknown errors become an opaque 500. */
export function answerFor(error: unknown, logger: Pick<Logger, 'error'>): ErrorAnswer {
  const fastify = fastifyError(error);
  if (fastify) return { status: fastify[0], body: { detail: fastify[1] }, headers: {} };
  if (error instanceof ApiError)
    return { status: error.getStatus(), body: error.getResponse() as ErrorAnswer['body'], headers: error.headers };
  if (error instanceof ThrottlerException)
    return { status: 429, body: { detail: 'Rate limit exceeded; retry after the time in Retry-After' }, headers: {} };
  if (error instanceof HttpException) {
    const response = error.getResponse();
    if (typeof response === 'object' && response !== null && 'detail' in response) {
      return { status: error.getStatus(), body: response as ErrorAnswer['body'], headers: {} };
    }
    const detail = readableMessage(response, error.message);
    // Nest's "Cannot GET /path?query" would echo a query a key or password was put in by mistake.
    const unrouted = error.getStatus() === 404 && /^Cannot \S+ /.test(detail);
    return { status: error.getStatus(), body: { detail: unrouted ? detail.split('?')[0] : detail }, headers: {} };
  }
  if (error instanceof SyntaxError && (error as { statusCode?: number }).statusCode === 400) {
    return { status: 400, body: { detail: 'Request body is not valid JSON' }, headers: {} };
  }
  if (isDatabaseUnavailable(error)) {
    return {
      status: 503,
      body: { detail: 'The database is unavailable; try again shortly' },
      headers: { 'retry-after': '5' },
    };
  }
  if (isMissingRow(error))
    return { status: 404, body: { detail: 'Not found: it was deleted while this request ran' }, headers: {} };
  const statusCode = (error as { statusCode?: unknown })?.statusCode;
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    return { status: statusCode, body: { detail: (error as Error).message || 'Bad request' }, headers: {} };
  }
  logger.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  return { status: 500, body: { detail: 'Internal server error' }, headers: {} };
}

/** Nest wraps Fastify's errors in an HttpException whose `cause` carries Fastify's code. */
function fastifyError(error: unknown): [number, string] | undefined {
  for (const candidate of [error, (error as { cause?: unknown })?.cause]) {
    const code = (candidate as { code?: unknown })?.code;
    if (typeof code === 'string' && code in FASTIFY_ERRORS) return FASTIFY_ERRORS[code];
  }
  return undefined;
}

function readableMessage(response: unknown, fallback: string): string {
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown })?.message;
  if (typeof message === 'string') return message;
  if (Array.isArray(message)) return message.join('; ');
  return fallback;
}

@Catch()
export class ExceptionToDetailFilter implements ExceptionFilter {
  private readonly logger = new Logger('HTTP');

  catch(error: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const { status, body, headers } = answerFor(error, this.logger);
    void reply.status(status).headers(headers).send(body);
  }
}
