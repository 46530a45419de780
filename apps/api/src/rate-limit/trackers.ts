import { DEFAULT_IPV6_SUBNET_PREFIX, normalizeIp, type ThrottlerGetTrackerFunction } from '@nestjs/throttler';
import { readSiwxProof } from '@crawlgate/core';
import { isIP } from 'node:net';

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

/**
 * The network a client address belongs to, as far as one party plausibly holds it: an IPv4 /24, an
 * IPv6 /48 (an IPv4-mapped IPv6 address is its IPv4 address).
 */
export function clientNetwork(ip: string | undefined): string {
  // The throttler's reading: an IPv4-mapped address in any spelling is its IPv4, an IPv6 one its /48.
  const normalized = normalizeIp(ip ?? '', 48);
  if (isIP(normalized) === 4) return `${normalized.split('.').slice(0, 3).join('.')}.0/24`;
  return normalized || 'unknown';
}

export const trackByGate = async (request: Request): Promise<string> => `gate:${request.params?.id ?? ''}`;

/** The default scope: the credential the route checks, once it authenticates; else the IP. */
export const trackByCredential = async (request: Request): Promise<string> =>
  subjects.get(request) ?? trackByIp(request);

/**
 * A sign-in's visitor, within the credential: the wallet the proof names and the client address
 * the middleware names, each when known. Anyone can answer a challenge with a fresh wallet's proof,
 * or pose under a payer's public address from elsewhere; neither holds off a payer who signs for
 * itself. (Behind a proxy whose address the middleware takes for the visitor's, a proof posing
 * under a payer's address still spends that payer's budget.)
 */
export const trackBySignInVisitor = async (request: Request): Promise<string> => {
  const body = request.body as { proof?: unknown } | undefined;
  const address = readSiwxProof(body?.proof)?.address;
  return [
    await trackByCredential(request),
    ...(address ? [`wallet:${address.toLowerCase()}`] : []),
    ...signInClient(request),
  ].join('/');
};

/** A sign-in's visitor across the wallets its proofs name: the client address the middleware names, within the credential. */
export const trackBySignInClient = async (request: Request): Promise<string> =>
  [await trackByCredential(request), ...signInClient(request)].join('/');

/** The client address the middleware names in a sign-in's body, as a tracker part; none when it names none. */
function signInClient(request: Request): string[] {
  const client = (request.body as { client_ip?: unknown } | undefined)?.client_ip;
  return typeof client === 'string' && isIP(client)
    ? [`client:${normalizeIp(client, DEFAULT_IPV6_SUBNET_PREFIX)}`]
    : [];
}
