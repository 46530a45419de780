import { DEFAULT_IPV6_SUBNET_PREFIX, normalizeIp, type ThrottlerGetTrackerFunction } from '@nestjs/throttler';

/*
 * Who a request counts against, per the spec's scopes. The throttler hashes the tracker into its
 * key, and a credential is tracked by the id it authenticates as, never by its text: so neither
 * another spelling of a header nor a made-up value opens a fresh bucket.
 */

/** The throttler hands trackers the raw request object (a FastifyRequest here). */
type Request = Parameters<ThrottlerGetTrackerFunction>[0];

const subjects = new WeakMap<object, string | undefined>();

/** Set by CredentialThrottlerGuard: who the request is by its route's credential, undefined if it does not authenticate. */
export function setCredentialSubject(request: object, subject: string | undefined): void {
  subjects.set(request, subject);
}

/** An IPv6 client holds a whole /64, so it counts as one, as the throttler's own tracker does. */
export const trackByIp = async (request: Request): Promise<string> =>
  `ip:${normalizeIp(request.ip, DEFAULT_IPV6_SUBNET_PREFIX)}`;

export const trackByGate = async (request: Request): Promise<string> => `gate:${request.params?.id ?? ''}`;

/** The default scope: the credential the route checks, once it authenticates; else the IP. */
export const trackByCredential = async (request: Request): Promise<string> =>
  subjects.get(request) ?? trackByIp(request);
