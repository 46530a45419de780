import { Inject, Injectable } from '@nestjs/common';
import { InjectThrottlerStorage, type ThrottlerStorage } from '@nestjs/throttler';
import { authenticateSite, siteTokenOf } from '../auth/credentials';
import type { Database } from '../db/database';
import { DATABASE } from '../db/tokens';
import { ApiError } from '../http/api-error';
import { HeldOff } from './held-off';
import { FORGED_GATES_PER_CLIENT } from './limits';
import { trackByIp } from './trackers';

/** The raw request object as Nest hands it over (a FastifyRequest here). */
type Request = Parameters<typeof trackByIp>[0] & { headers: Record<string, string | string[] | undefined> };

/**
 * Gate ids no usable secret of their site signed, counted per client (FORGED_GATES_PER_CLIENT) in
 * the throttler's shared storage: past the budget the client is held off in this process until the
 * bucket resets. A count the storage fails to take is lost, never turned into an answer.
 *
 * The client is a site's middleware when the request carries that site's valid token (it forwards
 * its own site's payments, from an address others may share: a serverless host's, a NAT's), else
 * the IP. The token is looked up only when a count is taken or someone is held off: the verifies
 * of a site in good standing cost no read more.
 */
@Injectable()
export class ForgedGateBudget {
  private readonly heldOff = new HeldOff();

  constructor(
    @InjectThrottlerStorage() private readonly buckets: ThrottlerStorage,
    @Inject(DATABASE) private readonly db: Database,
  ) {}

  /** 429 while the request's client is held off: none of its verifies is read. */
  async assertNotHeldOff(request: Request): Promise<void> {
    if (!this.heldOff.holdsAny()) return;
    const ms = this.heldOff.heldOffFor(await this.clientOf(request));
    if (ms > 0)
      throw new ApiError(
        429,
        `More than ${FORGED_GATES_PER_CLIENT.limit} gate ids no secret of their site signed came from this client in ${FORGED_GATES_PER_CLIENT.ttl / 60_000} minute; until that passes its payments are not looked at: nothing was charged, retry later`,
        {},
        { 'retry-after': String(Math.ceil(ms / 1000)) },
      );
  }

  /** One more forged gate id from the request's client. */
  async count(request: Request): Promise<void> {
    const client = await this.clientOf(request);
    const { limit, ttl } = FORGED_GATES_PER_CLIENT;
    const hits = await this.buckets
      .increment(`ForgedGates-${client}`, ttl, limit, ttl, 'default')
      .catch(() => undefined);
    if (hits?.isBlocked) this.heldOff.holdOff(client, Date.now() + hits.timeToBlockExpire * 1000);
  }

  private async clientOf(request: Request): Promise<string> {
    const site = siteTokenOf(request) ? await authenticateSite(this.db, request) : null;
    return site ? `site:${site.id}` : trackByIp(request);
  }
}
