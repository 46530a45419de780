/*
 * Name resolution for hosts that someone else named (key directory hosts, the pages an MCP server
 * is asked to read), through c-ares (node:dns's Resolver) rather than getaddrinfo (node:dns's
 * lookup). getaddrinfo runs on libuv's worker threads, four by default, which the site's own file,
 * crypto and zlib work share, and cannot be cancelled: a client naming Signature-Agent hosts whose
 * name servers answer slowly held them all, and the site's disk reads waited behind them. c-ares
 * holds no thread and gives up after its own timeout.
 *
 * It asks DNS only: /etc/hosts is not read (such a host is a public one).
 */

import type { LookupAddress, LookupAllOptions } from 'node:dns';
import { Resolver } from 'node:dns/promises';

export interface DnsResolveOptions {
  /** Name servers ("address" or "address:port"); default the system's (resolv.conf). */
  servers?: string[];
  /** c-ares' timeout of a query's try, one try per name server (it may shorten it after fast answers). Default 2,000 ms. */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 2_000;

/** Codes of a name that exists with no record of the type asked, or does not exist: no address, not a failure. */
const NO_RECORDS = new Set(['ENODATA', 'ENOTFOUND']);

/** Every IPv4 and IPv6 address of a name (only the family asked, when one is), as node:dns lookup's `all` answers. */
export function createDnsResolve(
  options: DnsResolveOptions = {},
): (hostname: string, lookupOptions: LookupAllOptions) => Promise<LookupAddress[]> {
  const resolver = new Resolver({ timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS, tries: 1 });
  if (options.servers) resolver.setServers(options.servers);
  const none = (error: NodeJS.ErrnoException): string[] => {
    if (error.code && NO_RECORDS.has(error.code)) return [];
    throw error;
  };
  return async (hostname, lookupOptions) => {
    const family = familyOf(lookupOptions.family);
    const [v4, v6] = await Promise.allSettled([
      family === 6 ? [] : resolver.resolve4(hostname).catch(none),
      family === 4 ? [] : resolver.resolve6(hostname).catch(none),
    ]);
    const addresses = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
    ];
    // One family's failure (a name server that drops or fails AAAA queries) is no failure while
    // the other answered addresses, as getaddrinfo asking for IPv4 only would not have seen it.
    const failed = [v4, v6].find((result) => result.status === 'rejected');
    if (failed && addresses.length === 0) throw failed.reason;
    return addresses;
  };
}

/** lookup's family option: 0, 4, 6, or (newer Node) 'IPv4' / 'IPv6'. */
function familyOf(family: LookupAllOptions['family']): 0 | 4 | 6 {
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return 0;
}
