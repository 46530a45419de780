import { isApiKeyFormat, isEvmAddress, isSiteTokenFormat, normalizeEvmAddress, sha256Hex } from '@crawlgate/core';
import type { Database } from '../db/database';
import type { Publisher } from '../generated/prisma/client';
import type { SiteWithPayout } from './request-context';
import { findSiteByTokenHash } from './site-by-token';

/*
 * The three credentials, read one way for the guards that check them and the rate limits that
 * count them: a spelling the guard accepts is never a different credential to the limiter.
 *
 * Keys and tokens are looked up by their SHA-256 hash: the plaintext is never stored, and an
 * index lookup on a hash reveals nothing about how close a guess came. A lookup is made once per
 * request (the limiter and the guard share it).
 */

export type CredentialKind = 'publisher' | 'site' | 'wallet';

/** The headers the three credentials come in. */
export const CREDENTIAL_HEADERS = ['authorization', 'x-site-token', 'x-wallet-address'] as const;

/** The raw request object as Nest hands it to guards (a FastifyRequest here). */
type Request = { headers: Record<string, string | string[] | undefined> };

/** A header's text, trimmed; undefined when it is absent, empty or sent twice. */
export function headerText(request: Request, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** The key of `Authorization: Bearer <key>`, the scheme in any letter case, spaces or tabs between. */
export function apiKeyOf(request: Request): string | undefined {
  const authorization = headerText(request, 'authorization');
  const key = authorization && /^Bearer\s+(\S+)$/i.exec(authorization)?.[1];
  return key && isApiKeyFormat(key) ? key : undefined;
}

export function siteTokenOf(request: Request): string | undefined {
  const token = headerText(request, 'x-site-token');
  return token && isSiteTokenFormat(token) ? token : undefined;
}

/** The wallet address in lower case: any letter case names the same wallet. */
export function walletOf(request: Request): `0x${string}` | undefined {
  const address = headerText(request, 'x-wallet-address');
  return address && isEvmAddress(address) ? normalizeEvmAddress(address) : undefined;
}

const publishers = new WeakMap<object, Promise<Publisher | null>>();
const sites = new WeakMap<object, Promise<SiteWithPayout | null>>();

/** The publisher whose API key the request carries; null when it carries none that is valid. */
export function authenticatePublisher(db: Database, request: Request): Promise<Publisher | null> {
  return once(publishers, request, async () => {
    const key = apiKeyOf(request);
    return key ? db.prisma.publisher.findUnique({ where: { apiKeyHash: sha256Hex(key) } }) : null;
  });
}

/** The site whose site token the request carries; null when it carries none that is valid. */
export function authenticateSite(db: Database, request: Request): Promise<SiteWithPayout | null> {
  return once(sites, request, async () => {
    const token = siteTokenOf(request);
    return token ? findSiteByTokenHash(db.sql, sha256Hex(token)) : null;
  });
}

/**
 * Who the request is by a credential of this kind, as a stable id (never the secret itself), or
 * undefined when it carries no such credential that checks out.
 */
export async function credentialSubject(
  db: Database,
  request: Request,
  kind: CredentialKind,
): Promise<string | undefined> {
  const id =
    kind === 'publisher'
      ? (await authenticatePublisher(db, request))?.id
      : kind === 'site'
        ? (await authenticateSite(db, request))?.id
        : walletOf(request);
  return id === undefined ? undefined : `${kind}:${id}`;
}

function once<T>(cache: WeakMap<object, Promise<T>>, request: object, lookup: () => Promise<T>): Promise<T> {
  let result = cache.get(request);
  if (!result) {
    result = lookup();
    cache.set(request, result);
  }
  return result;
}
