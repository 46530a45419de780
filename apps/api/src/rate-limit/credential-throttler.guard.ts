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
import { credentialSubject, type CredentialKind } from '../auth/credentials';
import type { AuthedRequest } from '../auth/request-context';
import type { Database } from '../db/database';
import { DATABASE } from '../db/tokens';
import { setCredentialSubject } from './trackers';

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

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const kind = this.routeCredential(context);
    if (kind) {
      const request = context.switchToHttp().getRequest<AuthedRequest>();
      setCredentialSubject(request, await credentialSubject(this.db, request, kind));
    }
    return super.canActivate(context);
  }

  private routeCredential(context: ExecutionContext): CredentialKind | undefined {
    const guards =
      this.reflector.getAllAndMerge<unknown[]>(GUARDS_METADATA, [context.getHandler(), context.getClass()]) ?? [];
    const checking = guards.find(
      (guard): guard is { credential: CredentialKind } => typeof guard === 'function' && 'credential' in guard,
    );
    return checking?.credential;
  }
}
