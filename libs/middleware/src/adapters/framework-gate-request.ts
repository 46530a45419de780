/*
 * The gate's view of an Express or Fastify request. The client's address is read (by the
 * adapter's ClientAddress) only when the gate asks for it, which it does for crawlers alone. A
 * class with the getter on its prototype, not an object literal with its own `get ip()`: V8 builds
 * a literal holding an accessor on its slow path, with a new closure each time, and that alone cost
 * a person's request through the Fastify adapter about a third of the bare route's throughput.
 */

import type { CrawlgateRequest } from '../crawlgate';
import type { HeaderRecord } from '../request-headers';
import type { ClientAddress, FrameworkRequest } from './client-address';

export class FrameworkGateRequest implements CrawlgateRequest {
  // Private: the framework's request (often circular) stays out of what a logger or isBot may serialize.
  readonly #source: FrameworkRequest;
  readonly #addressOf: ClientAddress;

  constructor(
    readonly method: string,
    readonly url: string,
    readonly routedUrl: string | undefined,
    readonly headers: HeaderRecord,
    source: FrameworkRequest,
    addressOf: ClientAddress,
  ) {
    this.#source = source;
    this.#addressOf = addressOf;
  }

  get ip(): string | undefined {
    return this.#addressOf(this.#source);
  }
}
