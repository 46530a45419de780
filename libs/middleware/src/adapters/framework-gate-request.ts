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

/**
 * The request as the site's own callbacks (isBot, crawlerIps.clientIp) get it. A
 * FrameworkGateRequest becomes a plain object whose own `ip` reads the class's: a prototype
 * getter is lost to a spread or a copy, and its private fields refuse a proxy, and a block list
 * read from a copy would free the address it names. Any other request as it is.
 */
export function requestForCallback(request: CrawlgateRequest): CrawlgateRequest {
  if (!(request instanceof FrameworkGateRequest)) return request;
  const { method, url, routedUrl, headers } = request;
  return {
    method,
    url,
    routedUrl,
    headers,
    get ip() {
      return request.ip;
    },
  };
}
