import { MAX_GATE_ID_LENGTH } from '@crawlgate/core';
import { Logger, type LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { ThrottlerStorageService, type ThrottlerStorage } from '@nestjs/throttler';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { CREDENTIAL_HEADERS } from '../auth/credentials';
import type { ChainContext } from '../chain/chain-context';
import { logRedactor, RedactingLogger } from './redacting-logger';
import type { AppConfig } from '../config/config';
import { resolveMasterKey } from '../crypto/master-key';
import type { Database } from '../db/database';
import { badRequest } from '../http/api-error';
import { answerClientError } from '../http/client-errors';
import { answerFor, ExceptionToDetailFilter } from '../http/exception.filter';
import { forbiddenCharacterItems } from '../http/forbidden-characters';
import { parseJsonBodiesAsStrictUtf8 } from '../http/json-body-parser';
import { jsonDepthExceeds, jsonWidthProblem, MAX_JSON_DEPTH } from '../http/json-depth';
import { ValidationFailed } from '../http/validation-items';
import { BodyValidationPipe } from '../http/validation.pipe';
import { serveDashboard } from '../dashboard/serve-dashboard';
import { setupOpenApi } from '../openapi/openapi';
import { RedisThrottlerStorage } from '../rate-limit/redis-throttler.storage';
import { AppModule } from './app.module';

export interface CreateAppOptions {
  config: AppConfig;
  database: Database;
  chain: ChainContext;
  /** Overrides the master key lookup (tests pass a fixed key). */
  masterKey?: Buffer;
  /** Redis key prefix for shared rate limits; tests isolate runs with it. */
  redisPrefix?: string;
}

export const LOG_LEVELS: Record<AppConfig['logLevel'], LogLevel[]> = {
  silent: [],
  error: ['fatal', 'error'],
  warn: ['fatal', 'error', 'warn'],
  info: ['fatal', 'error', 'warn', 'log'],
  debug: ['fatal', 'error', 'warn', 'log', 'debug'],
};

/** Headers on every answer, errors and static files included: none may be sniffed into another content type. */
const EVERY_ANSWER = { 'x-content-type-options': 'nosniff' };

/** Builds the configured, not yet listening, Nest application on Fastify. */
export async function createApp(options: CreateAppOptions): Promise<NestFastifyApplication> {
  const { config, database, chain } = options;
  const masterKey = options.masterKey ?? resolveMasterKey(config.masterKey, config.dataDir).key;
  const limiterStorage: ThrottlerStorage = config.redisUrl
    ? await RedisThrottlerStorage.connect(config.redisUrl, options.redisPrefix ?? 'crawlgate:')
    : new ThrottlerStorageService();

  const adapter = new FastifyAdapter({
    bodyLimit: config.bodyLimitBytes,
    // Fastify turns Node's request timeout off (0): a client sending its headers or body a byte at a
    // time would hold its socket and its buffered body forever. Node checks sockets every
    // connectionsCheckingInterval, so a stalled request ends within twice the timeout.
    requestTimeout: config.requestTimeoutMs,
    http: {
      headersTimeout: Math.min(60_000, config.requestTimeoutMs),
      connectionsCheckingInterval: Math.min(30_000, config.requestTimeoutMs),
    },
    // A count of hops, never `true`: with `true` the client's own leftmost X-Forwarded-For entry was its IP.
    // (Fastify's own reading of a number; the adapter's options type does not take one.)
    trustProxy: (_address: string, hop: number) => hop < config.trustProxyHops,
    // A gate id carries its path, so /v1/gates/{id} takes ids far longer than Fastify's default 100.
    routerOptions: { maxParamLength: MAX_GATE_ID_LENGTH },
    // What Node's parser refuses before any route (huge headers, a malformed request): `{detail}` too.
    clientErrorHandler: answerClientError,
    // The router rejects a path it cannot decode before Nest sees the request: answer it as we answer the rest.
    frameworkErrors: (error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
      const { status, body, headers } = answerFor(error, new Logger('HTTP'));
      void reply
        .status(status)
        .headers({ ...headers, ...EVERY_ANSWER, 'cache-control': 'no-store' })
        .send(body); // no onSend hook runs here
    },
  });
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.create({ config, database, chain, masterKey, limiterStorage }),
    adapter,
    {
      // The RPC URL's key and any URL's password never reach a log line, however an error quotes them.
      logger: new RedactingLogger(
        logRedactor({ rpcUrl: chain.rpcUrl, others: [config.databaseUrl, config.redisUrl] }),
        LOG_LEVELS[config.logLevel],
      ),
      abortOnError: false,
      // Fastify's own JSON parser only: any other content type is answered 415.
      bodyParser: false,
    },
  );
  app.setGlobalPrefix('v1');
  app.useGlobalFilters(new ExceptionToDetailFilter());
  app.useGlobalPipes(new BodyValidationPipe());

  const fastify = app.getHttpAdapter().getInstance();
  fastify.removeContentTypeParser('text/plain');
  parseJsonBodiesAsStrictUtf8(fastify);
  // Callback hooks, not async ones: an async hook costs every request a promise and a turn of the
  // microtask queue (they showed in the profile of POST /v1/gates).
  fastify.addHook('preValidation', (request, _reply, done) => {
    if (jsonDepthExceeds(request.body))
      return done(badRequest(`Request body is nested more than ${MAX_JSON_DEPTH} levels deep`));
    const wide = jsonWidthProblem(request.body);
    if (wide) return done(new ValidationFailed([wide]));
    const forbidden = forbiddenCharacterItems(request);
    done(forbidden.length > 0 ? new ValidationFailed(forbidden) : undefined);
  });
  fastify.addHook('onSend', (request, reply, payload, done) => {
    void reply.headers(EVERY_ANSWER);
    // An answer to a credential is that account's own (sites, revenue, payers, crawlers): no cache keeps it.
    // Nor an error, whoever asked: it may quote what the request sent.
    if (
      !reply.hasHeader('cache-control') &&
      (reply.statusCode >= 400 || CREDENTIAL_HEADERS.some((name) => request.headers[name] !== undefined))
    )
      void reply.header('cache-control', 'no-store');
    done(null, payload);
  });
  fastify.addHook('onClose', async () => {
    if (limiterStorage instanceof RedisThrottlerStorage) await limiterStorage.close();
    else (limiterStorage as ThrottlerStorageService).onApplicationShutdown();
  });

  setupOpenApi(app, config);
  serveDashboard(app, config.dashboardDir);
  return app;
}
