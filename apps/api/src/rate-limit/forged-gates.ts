import { Injectable } from '@nestjs/common';
import { InjectThrottlerStorage, type ThrottlerStorage } from '@nestjs/throttler';
import { ApiError } from '../http/api-error';
import { HeldOff } from './held-off';
import { FORGED_GATES_PER_CLIENT } from './limits';

/**
 * Gate ids no usable secret of their site signed, counted per client (FORGED_GATES_PER_CLIENT) in
 * the throttler's shared storage: past the budget the client is held off in this process until the
 * bucket resets. A count the storage fails to take is lost, never turned into an answer.
 */
@Injectable()
export class ForgedGateBudget {
  private readonly heldOff = new HeldOff();

  constructor(@InjectThrottlerStorage() private readonly buckets: ThrottlerStorage) {}

  /** 429 while `client` is held off: none of its verifies is read. */
  assertNotHeldOff(client: string): void {
    const ms = this.heldOff.heldOffFor(client);
    if (ms > 0)
      throw new ApiError(
        429,
        `More than ${FORGED_GATES_PER_CLIENT.limit} gate ids no secret of their site signed came from this client in ${FORGED_GATES_PER_CLIENT.ttl / 60_000} minute; until that passes its payments are not looked at: nothing was charged, retry later`,
        {},
        { 'retry-after': String(Math.ceil(ms / 1000)) },
      );
  }

  /** One more forged gate id from `client`. */
  async count(client: string): Promise<void> {
    const { limit, ttl } = FORGED_GATES_PER_CLIENT;
    const hits = await this.buckets
      .increment(`ForgedGates-${client}`, ttl, limit, ttl, 'default')
      .catch(() => undefined);
    if (hits?.isBlocked) this.heldOff.holdOff(client, Date.now() + hits.timeToBlockExpire * 1000);
  }
}
