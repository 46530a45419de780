import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { isApiKeyFormat, isEvmAddress, isSiteTokenFormat, normalizeEvmAddress, sha256Hex } from '@crawlgate/core';
import type { Database } from '../db/database';
import { DATABASE } from '../db/tokens';
import { unauthorized } from '../http/api-error';
import type { AuthedRequest } from './request-context';
import { findSiteByTokenHash } from './site-by-token';

/*
 * Keys and tokens are looked up by their SHA-256 hash: the plaintext is never stored, and an
 * index lookup on a hash reveals nothing about how close a guess came.
 */

function header(request: AuthedRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value.trim() : undefined;
}

@Injectable()
export class PublisherAuthGuard implements CanActivate {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthedRequest>();
    const authorization = header(request, 'authorization');
    if (!authorization) throw unauthorized('Missing Authorization header; send "Bearer xk_pub_..."');
    const key = /^Bearer\s+(\S+)$/i.exec(authorization)?.[1];
    if (!key || !isApiKeyFormat(key)) throw unauthorized('Invalid API key');
    const publisher = await this.db.prisma.publisher.findUnique({ where: { apiKeyHash: sha256Hex(key) } });
    if (!publisher) throw unauthorized('Invalid API key');
    request.publisher = publisher;
    return true;
  }
}

@Injectable()
export class SiteTokenGuard implements CanActivate {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthedRequest>();
    const token = header(request, 'x-site-token');
    if (!token) throw unauthorized('Missing X-Site-Token header');
    if (!isSiteTokenFormat(token)) throw unauthorized('Invalid site token');
    const site = await findSiteByTokenHash(this.db.sql, sha256Hex(token));
    if (!site) throw unauthorized('Invalid site token');
    request.site = site;
    return true;
  }
}

/** Agents are identified by address only: a lookup key, not proof of ownership (see the spec). */
@Injectable()
export class WalletGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<AuthedRequest>();
    const address = header(request, 'x-wallet-address');
    if (!address) throw unauthorized('Missing X-Wallet-Address header');
    if (!isEvmAddress(address)) throw unauthorized('X-Wallet-Address must be 0x followed by 40 hexadecimal characters');
    request.wallet = normalizeEvmAddress(address);
    return true;
  }
}
