import { ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { GUARDS_METADATA } from '@nestjs/common/constants';
import { Reflector } from '@nestjs/core';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  ThrottlerGuard,
  type ThrottlerModuleOptions,
  type ThrottlerStorage,
} from '@nestjs/throttler';
import { sha256Hex } from '@crawlgate/core';
import { credentialSubject, type CredentialKind } from '../auth/credentials';
import type { AuthedRequest } from '../auth/request-context';
import type { Database } from '../db/database';
import { DATABASE } from '../db/tokens';
import {
  ACROSS_PER_CLIENT,
  COUNTED_PER_NETWORK,
  DEFAULT_LIMIT,
  PASSWORD_ROUTES_PER_NETWORK,
  UNAUTHENTICATED_PER_IP,
  WALLET_ROUTES_PER_CLIENT,
  type AcrossPerClient,
} from './limits';
import { clientNetwork, setCredentialSubject, trackByIp } from './trackers';

/**
 * The throttler, told first who the request is by the credential its route checks (the kind its
 * guard names). It runs before that guard, so a credential that does not check out is known here
 * already and counts against the IP; the lookup is the guard's own, made once per request.
 */
@Injectable()
export class CredentialThrottlerGuard extends ThrottlerGuard {
  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
    reflector: Reflector,
    @Inject(DATABASE) private readonly db: Database,
  ) {
    super(options, storage, reflector);
  }

  private readonly credentials = new WeakMap<object, Map<object, CredentialKind | undefined>>();

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const kind = this.routeCredential(context);
    if (kind) {
      const request = context.switchToHttp().getRequest<AuthedRequest>();
      const subject = await credentialSubject(this.db, request, kind);
      if (kind !== 'wallet') {
        setCredentialSubject(request, subject);
        if (!subject && this.reflector.get<boolean | undefined>(UNAUTHENTICATED_PER_IP, context.getHandler()))
          await this.countAcross(
            context,
            `${context.getClass().name}-${context.getHandler().name}-unauthenticated`,
            await trackByIp(request),
            DEFAULT_LIMIT,
          );
        const across = this.reflector.get<AcrossPerClient | undefined>(ACROSS_PER_CLIENT, context.getHandler());
        if (subject && across)
          await this.countAcross(
            context,
            `${context.getClass().name}-${context.getHandler().name}-across`,
            await across.getTracker(request),
            across,
          );
      } else {
        // A wallet address proves nothing (anyone may send it): its bucket is per client too, so
        // requests naming it from elsewhere never hold its owner off.
        const client = await trackByIp(request);
        setCredentialSubject(request, subject && `${subject}/${client}`);
        await this.countAcross(context, WALLET_ROUTES_KEY, client, WALLET_ROUTES_PER_CLIENT);
      }
    }
    const admitted = await super.canActivate(context);
    // Past the route's own limit (per IP) first: a flooding address does not spend its network's budget.
    if (this.reflector.get<boolean | undefined>(COUNTED_PER_NETWORK, context.getHandler())) {
      const request = context.switchToHttp().getRequest<AuthedRequest>();
      await this.countAcross(
        context,
        PASSWORD_ROUTES_KEY,
        `net:${clientNetwork(request.ip)}`,
        PASSWORD_ROUTES_PER_NETWORK,
      );
    }
    return admitted;
  }

  /**
   * A bucket across a route's finer ones (WALLET_ROUTES_PER_CLIENT per client IP across every
   * wallet route and address; UNAUTHENTICATED_PER_IP across a route's visitors; ACROSS_PER_CLIENT,
   * such as a sign-in's visitor across the wallets it names); 429
   * with Retry-After once spent. It sets no X-RateLimit headers: those speak of the finer bucket,
   * the one the spec names, on its 429s too.
   */
  private async countAcross(
    context: ExecutionContext,
    prefix: string,
    tracker: string,
    { limit, ttl }: { limit: number; ttl: number },
  ): Promise<void> {
    const key = `${prefix}-${tracker}`;
    const hits = await this.storageService.increment(key, ttl, limit, ttl, 'default');
    if (!hits.isBlocked) return;
    this.setResponseHeader(this.getRequestResponse(context).res, 'Retry-After', hits.timeToBlockExpire);
    await this.throwThrottlingException(context, { limit, ttl, key, tracker, ...hits });
  }

  /**
   * The bucket's key. The throttler's own hashes every key (SHA-256 through node:crypto, on every
   * request); here only a tracker that can be long is hashed (a gate id, up to 8 KB): the others
   * are short ids ("site:<uuid>", "ip:<address>"). The two forms cannot meet: "-" or "#" follows
   * the same prefix. A plain key is partly the client's text, so the storage must never build one
   * key from another (redis-throttler.storage.ts keeps its block flags in a namespace of their own).
   */
  protected override generateKey(context: ExecutionContext, suffix: string, name: string): string {
    const prefix = `${context.getClass().name}-${context.getHandler().name}-${name}`;
    return suffix.length <= MAX_PLAIN_TRACKER ? `${prefix}-${suffix}` : `${prefix}#${sha256Hex(suffix)}`;
  }

  /** Read once per route (controller and handler): its guards are fixed when the app starts. */
  private routeCredential(context: ExecutionContext): CredentialKind | undefined {
    const [controller, handler] = [context.getClass(), context.getHandler()];
    let routes = this.credentials.get(controller);
    if (!routes) this.credentials.set(controller, (routes = new Map()));
    if (!routes.has(handler)) {
      const guards = this.reflector.getAllAndMerge<unknown[]>(GUARDS_METADATA, [handler, controller]) ?? [];
      const checking = guards.find(
        (guard): guard is { credential: CredentialKind } => typeof guard === 'function' && 'credential' in guard,
      );
      routes.set(handler, checking?.credential);
    }
    return routes.get(handler);
  }
}

/** No controller is named so: these buckets' keys never meet a route's ("<controller>-<handler>-<name>-…"). */
const WALLET_ROUTES_KEY = 'WalletRoutes-client';
const PASSWORD_ROUTES_KEY = 'PasswordRoutes-network';

/** Longer trackers are hashed into the key: an IPv6 address with its prefix is under 60 characters. */
const MAX_PLAIN_TRACKER = 128;
