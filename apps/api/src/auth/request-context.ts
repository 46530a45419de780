import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Publisher, Site } from '../generated/prisma/client';

/** What the guards attach to a request once a credential checks out. */
/** A site as the site-token guard loads it: with the payout address gates need, in the same query. */
export type SiteWithPayout = Site & { publisher: { payoutAddress: string | null } };

export interface AuthedRequest extends FastifyRequest {
  publisher?: Publisher;
  site?: SiteWithPayout;
  wallet?: `0x${string}`;
}

function fromRequest<K extends 'publisher' | 'site' | 'wallet'>(key: K) {
  return createParamDecorator((_: unknown, context: ExecutionContext) => {
    const value = context.switchToHttp().getRequest<AuthedRequest>()[key];
    if (value === undefined) throw new Error(`No ${key} on the request: is its guard missing?`);
    return value;
  })();
}

export const CurrentPublisher = () => fromRequest('publisher');
export const CurrentSite = () => fromRequest('site');
export const CurrentWallet = () => fromRequest('wallet');
