/*
 * NestJS (Express or Fastify platform):
 *
 *   @Module({ imports: [CrawlgateModule.forRoot(options)] })
 *
 * registers CrawlgateGuard for every route (APP_GUARD) and serves /.well-known/pay.json. Or
 * provide CRAWLGATE yourself and put `@UseGuards(CrawlgateGuard)` on the controllers to gate.
 * A guard only runs for routes Nest has, so unknown paths are 404 for everyone; files served by
 * useStaticAssets and routes added on the platform instance never reach it (gate those with
 * crawlgateExpress or crawlgateFastify on the instance). GraphQL resolvers pass only what needs no
 * payment (see graphqlDecisions); message transports and WebSocket gateways are not gated. 402/403/503
 * are thrown as HttpException with the gate's JSON as the response: Nest's default filter sends it
 * as is (a custom global filter must do the same). With a global prefix, exclude the pay.json
 * route from it: `app.setGlobalPrefix('api', { exclude: ['.well-known/pay.json'] })`.
 *
 * The only module of the package that imports @nestjs/common (an optional peer dependency).
 */

import {
  Controller,
  ForbiddenException,
  Get,
  HttpException,
  Inject,
  Injectable,
  Module,
  NotFoundException,
  Optional,
  Req,
  Res,
  type CanActivate,
  type DynamicModule,
  type ExecutionContext,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { APP_GUARD, HttpAdapterHost } from '@nestjs/core';
import type { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { SIGN_IN_WITH_X_HEADER } from '@crawlgate/core';
import {
  createCrawlgate,
  PAY_JSON_PATH,
  type Crawlgate,
  type CrawlgateOptions,
  type CrawlgateRequest,
} from '../crawlgate';
import type { Decision } from '../decision';
import { PAYMENT_HEADERS } from '../x402-headers';
import { withNodeKeyDirectoryFetch } from '../web-bot-auth/node-directory-fetch';
import { createClientAddress, type ClientAddress, type FrameworkRequest } from './client-address';
import { keepPaidAnswerHeaders } from './paid-answer';
import { recordWrittenTargets, writtenTarget } from './written-target';

/** Injection token of the Crawlgate instance. */
export const CRAWLGATE = Symbol('CRAWLGATE');
/** How the guard reads the client's address (client-address.ts); forRoot provides it with the options' logger. */
export const CRAWLGATE_CLIENT_ADDRESS = Symbol('CRAWLGATE_CLIENT_ADDRESS');
/** For a CRAWLGATE provided without it: warns on the console. */
const consoleClientAddress = createClientAddress(console);

/** Express request or Fastify request: both have these. */
interface PlatformRequest {
  method: string;
  url: string;
  originalUrl?: string;
  /** Express's request only: the mount path url is under. */
  baseUrl?: string;
  /** Fastify's request only: the Node request under it. */
  raw?: unknown;
  headers: CrawlgateRequest['headers'];
  ip?: string;
  socket?: FrameworkRequest['socket'];
  app?: unknown;
}

/** Express response or Fastify reply: both have header(name, value). */
interface PlatformResponse {
  header(name: string, value: string): unknown;
  /** Fastify's reply only: the Node response under it (Express's response is one). */
  raw?: unknown;
}

/**
 * GraphQL runs the guard once per resolver, with no HTTP status of its own to answer (a thrown 402
 * becomes a GraphQL error): one decision per HTTP request, shared by its resolvers for 2 s, and no payment
 * taken there (a payer would be charged with no token sent back). Persons, allowed bots and valid
 * tokens pass; anything else is refused. To charge for a GraphQL endpoint, gate it at the HTTP
 * layer (crawlgateExpress or crawlgateFastify on the platform instance).
 */
const graphqlDecisions = new WeakMap<object, { decision: Promise<Decision>; at: number }>();
/** A request's resolvers run within it; a request object that lives longer (graphql-ws's upgrade request) is decided again. */
const GRAPHQL_DECISION_MS = 2_000;
const PAYING_HEADERS = new Set<string>([...PAYMENT_HEADERS, SIGN_IN_WITH_X_HEADER]);

@Injectable()
export class CrawlgateGuard implements CanActivate {
  private readonly addressOf: ClientAddress;

  constructor(
    @Inject(CRAWLGATE) private readonly gate: Crawlgate,
    @Optional() @Inject(CRAWLGATE_CLIENT_ADDRESS) addressOf?: ClientAddress,
  ) {
    this.addressOf = addressOf ?? consoleClientAddress;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const type = context.getType<string>();
    // Message transports (microservices) and WebSocket gateways serve no HTTP page: not gated.
    if (type === 'rpc' || type === 'ws') return true;
    const exchange = type === 'http' ? httpExchange(context) : type === 'graphql' ? graphqlExchange(context) : null;
    // A context the gate cannot read a request from is refused, never served unpriced.
    if (!exchange) throw new ForbiddenException(`Crawlgate cannot price a ${type} request`);
    // pay.json's own controller asks the gate itself. Decided by the route the router chose, never by
    // reading the URL: "/premium/x;/../../.well-known/pay.json" reads as pay.json and routes to /premium/x.
    if (context.getClass() === CrawlgatePayJsonController) return true;
    if (type === 'graphql') return this.graphqlPasses(exchange.request);
    const decision = await this.gate.handleNow(toCrawlgateRequest(exchange.request, this.addressOf));
    if (decision.kind === 'pass') return true;
    if (exchange.response) setHeaders(exchange.response, decision.headers);
    if (decision.kind === 'pass-after-payment') {
      // A handler's @Header('Cache-Control', …) is set after the guard: the paid answer's headers are set again over it.
      if (exchange.response) keepPaidAnswerHeaders(nodeResponseOf(exchange.response), decision.headers);
      return true;
    }
    throw asException(decision);
  }

  /** One decision per HTTP request for all its resolvers, from its headers without payments (below). */
  private async graphqlPasses(request: PlatformRequest): Promise<boolean> {
    const now = Date.now();
    let cached = graphqlDecisions.get(request);
    if (!cached || now - cached.at >= GRAPHQL_DECISION_MS) {
      const headers = Object.fromEntries(
        Object.entries(request.headers).filter(([name]) => !PAYING_HEADERS.has(name.toLowerCase())),
      );
      const crawlgateRequest = { ...toCrawlgateRequest(request, this.addressOf), headers };
      cached = { decision: Promise.resolve(this.gate.handleNow(crawlgateRequest)), at: now };
      graphqlDecisions.set(request, cached);
    }
    const settled = await cached.decision;
    if (settled.kind === 'pass') return true;
    if (settled.kind === 'respond') throw asException(settled);
    throw new ForbiddenException('Crawlgate takes no payment inside GraphQL');
  }
}

@Controller()
export class CrawlgatePayJsonController {
  private readonly addressOf: ClientAddress;

  constructor(
    @Inject(CRAWLGATE) private readonly gate: Crawlgate,
    @Optional() @Inject(CRAWLGATE_CLIENT_ADDRESS) addressOf?: ClientAddress,
  ) {
    this.addressOf = addressOf ?? consoleClientAddress;
  }

  @Get(PAY_JSON_PATH.slice(1))
  async payJson(
    @Req() request: PlatformRequest,
    @Res({ passthrough: true }) response: PlatformResponse,
  ): Promise<unknown> {
    const decision = await this.gate.handleNow({ ...toCrawlgateRequest(request, this.addressOf), url: PAY_JSON_PATH });
    // pass: the API is down and failMode is open; there is nothing to publish.
    if (decision.kind !== 'respond') throw new NotFoundException();
    setHeaders(response, decision.headers);
    if (decision.status !== 200) throw asException(decision);
    return JSON.parse(decision.body);
  }
}

@Module({})
export class CrawlgateModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(CRAWLGATE) private readonly gate: Crawlgate,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  /** The client's target, kept before any middleware can rewrite it (written-target.ts). */
  onModuleInit(): void {
    const server = this.adapterHost.httpAdapter?.getHttpServer() as EventEmitter | undefined;
    if (typeof server?.prependListener === 'function') recordWrittenTargets(server);
  }

  /** Stops the background refresh and reports the last gate counts (needs app.enableShutdownHooks() for signals). */
  async onApplicationShutdown(): Promise<void> {
    await this.gate.close();
  }

  static forRoot(options: CrawlgateOptions): DynamicModule {
    return {
      module: CrawlgateModule,
      controllers: [CrawlgatePayJsonController],
      providers: [
        { provide: CRAWLGATE, useValue: createCrawlgate(withNodeKeyDirectoryFetch(withoutLicenseDocument(options))) },
        { provide: CRAWLGATE_CLIENT_ADDRESS, useValue: createClientAddress(options.logger ?? console) },
        { provide: APP_GUARD, useClass: CrawlgateGuard },
      ],
      exports: [CRAWLGATE, CRAWLGATE_CLIENT_ADDRESS],
    };
  }
}

/**
 * Not built on Nest yet: serving the RSL license document and robots.txt (a guard can only throw
 * JSON, and a controller's path is fixed at compile time). Off by default here; asking for it throws.
 */
function withoutLicenseDocument(options: CrawlgateOptions): CrawlgateOptions {
  const { path, robotsTxt } = options.licensing ?? {};
  if ((path !== undefined && path !== false) || robotsTxt !== undefined) {
    throw new TypeError(
      'CrawlgateModule: licensing.path and licensing.robotsTxt are not supported on NestJS yet; serve the document from a controller (buildRslDocument) and set path: false',
    );
  }
  return { ...options, licensing: { ...options.licensing, path: false } };
}

interface Exchange {
  request: PlatformRequest;
  response?: PlatformResponse;
}

function httpExchange(context: ExecutionContext): Exchange {
  const http = context.switchToHttp();
  return { request: http.getRequest<PlatformRequest>(), response: http.getResponse<PlatformResponse>() };
}

/**
 * A GraphQL resolver's HTTP request, from the context @nestjs/graphql builds (its third argument):
 * `{ req }` (Nest's default), Apollo's `{ req, res }` on Express, `{ request, reply }` on Fastify,
 * Mercurius's `{ reply }`. Null when none is there (a subscription over WebSocket): the guard then refuses.
 */
function graphqlExchange(context: ExecutionContext): Exchange | null {
  const gql = context.getArgByIndex<Record<string, unknown> | undefined>(2);
  const reply = gql?.reply as { request?: PlatformRequest } | undefined;
  const request = (gql?.req ?? gql?.request ?? reply?.request) as PlatformRequest | undefined;
  if (!request || typeof request.url !== 'string' || typeof request.method !== 'string' || !request.headers)
    return null;
  return { request };
}

/**
 * The URL as the client wrote it, and the one the router routes by: on Fastify (its request has
 * .raw) url is after rewriteUrl and originalUrl before; on Express originalUrl is as written and
 * baseUrl + url after mount paths and rewrites.
 */
function toCrawlgateRequest(request: PlatformRequest, addressOf: ClientAddress): CrawlgateRequest {
  const routedUrl = request.raw !== undefined ? request.url : `${request.baseUrl ?? ''}${request.url}`;
  return {
    method: request.method,
    url: writtenTarget(request.raw ?? request) ?? request.originalUrl ?? request.url,
    routedUrl,
    headers: request.headers,
    ip: addressOf(request),
  };
}

const nodeResponseOf = (response: PlatformResponse) => (response.raw ?? response) as ServerResponse;

function setHeaders(response: PlatformResponse, headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) response.header(name, value);
}

function asException(decision: Extract<Decision, { kind: 'respond' }>): HttpException {
  return new HttpException(JSON.parse(decision.body) as Record<string, unknown>, decision.status);
}
