import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { Database } from '../db/database';
import { DATABASE } from '../db/tokens';
import { unauthorized } from '../http/api-error';
import { authenticatePublisher, authenticateSite, headerText, walletOf, type CredentialKind } from './credentials';
import type { AuthedRequest } from './request-context';

/*
 * Each guard names the kind of credential it checks (`credential`), so the rate limiter counts a
 * route's requests by that credential (rate-limit/credential-throttler.guard.ts).
 */

@Injectable()
export class PublisherAuthGuard implements CanActivate {
  static readonly credential: CredentialKind = 'publisher';
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthedRequest>();
    if (!headerText(request, 'authorization'))
      throw unauthorized('Missing Authorization header; send "Bearer xk_pub_..."');
    const publisher = await authenticatePublisher(this.db, request);
    if (!publisher) throw unauthorized('Invalid API key');
    request.publisher = publisher;
    return true;
  }
}

@Injectable()
export class SiteTokenGuard implements CanActivate {
  static readonly credential: CredentialKind = 'site';
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthedRequest>();
    if (!headerText(request, 'x-site-token')) throw unauthorized('Missing X-Site-Token header');
    const site = await authenticateSite(this.db, request);
    if (!site) throw unauthorized('Invalid site token');
    request.site = site;
    return true;
  }
}

/** Agents are identified by address only: a lookup key, not proof of ownership (see the spec). */
@Injectable()
export class WalletGuard implements CanActivate {
  static readonly credential: CredentialKind = 'wallet';

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<AuthedRequest>();
    if (!headerText(request, 'x-wallet-address')) throw unauthorized('Missing X-Wallet-Address header');
    const wallet = walletOf(request);
    if (!wallet) throw unauthorized('X-Wallet-Address must be 0x followed by 40 hexadecimal characters');
    request.wallet = wallet;
    return true;
  }
}
