import { DEFAULT_IPV6_SUBNET_PREFIX, normalizeIp, type ThrottlerGetTrackerFunction } from '@nestjs/throttler';
import { readSiwxProof } from '@crawlgate/core';

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

/**
 * A sign-in's wallet, within the credential: anyone can answer a challenge with a fresh wallet's
 * proof, or pose under a payer's public address, and those must not spend the budget of a payer who
 * signs for itself. A body that names no wallet counts against the credential alone.
 */
export const trackBySignInWallet = async (request: Request): Promise<string> => {
  const credential = await trackByCredential(request);
  const address = readSiwxProof((request.body as { proof?: unknown } | undefined)?.proof)?.address;
  return address ? `${credential}/wallet:${address.toLowerCase()}` : credential;
};
