import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import { SkipThrottle, Throttle } from '@nestjs/throttler';
import { RATE_LIMIT_EXTENSION, type RateLimitDoc } from '../openapi/standard-answers';
import { trackByCredential, trackByGate, trackByIp, trackBySignInVisitor } from './trackers';

const MINUTE = 60_000;

/** The spec's limits table; everything not named here gets the default, 100/min per credential. */
export const DEFAULT_LIMIT = { limit: 100, ttl: MINUTE };
export const DEFAULT_LIMIT_DOC: RateLimitDoc = {
  limit: DEFAULT_LIMIT.limit,
  window_seconds: MINUTE / 1000,
  per: 'credential',
};

/** Each limit also documents itself on the route (the OpenAPI document's 429 and `x-rate-limit`). */
const limitPer = (per: RateLimitDoc['per'], getTracker: typeof trackByIp) => (limit: number) =>
  applyDecorators(
    Throttle({ default: { limit, ttl: MINUTE, getTracker } }),
    ApiExtension(RATE_LIMIT_EXTENSION, { limit, window_seconds: MINUTE / 1000, per } satisfies RateLimitDoc),
  );

export const LimitPerIp = limitPer('ip', trackByIp);
/** For routes whose guard checks the site token: counted per site, as any route per its credential. */
export const LimitPerSiteToken = limitPer('credential', trackByCredential);
/** The spec's per-gate limit, and GATE_VERIFIES_PER_CLIENT beside it. */
export const LimitPerGate = (limit: number) =>
  applyDecorators(
    Throttle({ default: { limit, ttl: MINUTE, getTracker: trackByGate } }),
    SetMetadata(CLIENT_CAP, GATE_VERIFIES_PER_CLIENT),
    ApiExtension(RATE_LIMIT_EXTENSION, {
      limit,
      window_seconds: MINUTE / 1000,
      per: 'gate',
      per_client: GATE_VERIFIES_PER_CLIENT.limit,
    } satisfies RateLimitDoc),
  );
/** Sign-ins per wallet the proof names and visitor the middleware names, within the site token's credential. */
export const LimitPerSignInVisitor = limitPer('visitor', trackBySignInVisitor);
/**
 * X-Confirm-Password checks per publisher, right or wrong, whatever key or address asks: the
 * password guards the payout address against a leaked API key, so that key must not also be a
 * way to guess it (the route's own limit, 100 a minute per key, would allow 144,000 a day).
 */
export const PASSWORD_CONFIRMATIONS = { limit: 5, ttl: 15 * MINUTE };
/**
 * Logins per account (by email, registered or not), right or wrong, whatever address asks: the
 * spec's 5 a minute per IP alone lets a guesser with many addresses try passwords without end.
 * Counting every attempt blocks the owner too while it lasts; the API key it has keeps working.
 */
export const LOGINS_PER_ACCOUNT = { limit: 10, ttl: 15 * MINUTE };

/**
 * Requests to the wallet routes per client IP, across every wallet address it names: each address
 * has its own 100 a minute per client (an address proves nothing), so without this one client
 * could read wallet histories without end by naming ever more addresses.
 */
export const WALLET_ROUTES_PER_CLIENT: ClientCap = { name: 'WalletRoutes', limit: 1_000, ttl: MINUTE };

/**
 * Gate verifies per client IP, across every gate id it names: the spec's limit is per gate, and a
 * gate id is the caller's text, so one client could open a bucket per made-up id (each kept in the
 * limiter's memory for its minute) without end. Far above what one server's middleware sends for
 * its crawlers' payments: the load test's 50 payments a second are 3,000 a minute.
 */
export const GATE_VERIFIES_PER_CLIENT: ClientCap = { name: 'GateVerifies', limit: 6_000, ttl: MINUTE };

/**
 * A second limit, per client IP, on every route that names it, beside the route's own: counted
 * first, so a client over it opens no bucket of the route's own scope.
 */
export interface ClientCap {
  /** Its bucket's name: no controller is named so, so its keys never meet a route's. */
  name: string;
  limit: number;
  ttl: number;
}

/** The metadata key of a route's ClientCap (CredentialThrottlerGuard counts it). */
export const CLIENT_CAP = 'crawlgate:client-cap';

/**
 * Documents the wallet routes' limits (WalletAuth applies it), which CredentialThrottlerGuard
 * counts on every route WalletAuth guards: the default per address and client IP, and WALLET_ROUTES_PER_CLIENT.
 */
export const LimitPerWalletAndClient = () =>
  ApiExtension(RATE_LIMIT_EXTENSION, {
    limit: DEFAULT_LIMIT.limit,
    window_seconds: MINUTE / 1000,
    per: 'wallet',
    per_client: WALLET_ROUTES_PER_CLIENT.limit,
  } satisfies RateLimitDoc);

/** A route no limit applies to (health checks). */
export const Unlimited = () => applyDecorators(SkipThrottle(), ApiExtension(RATE_LIMIT_EXTENSION, false));
