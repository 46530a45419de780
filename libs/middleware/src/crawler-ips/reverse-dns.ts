/*
 * Whether a request that names a crawler comes from that crawler's operator, for operators that
 * publish no IP ranges but document their crawlers' host names (Yandex, Baidu, Bing's other
 * crawlers, …; the catalogue's `reverseDns`): forward-confirmed reverse DNS. The address's PTR
 * name must be one of the operator's domains or under one, and that name must resolve back to the
 * address. A PTR record is written by whoever holds the address, so it proves nothing alone; the
 * forward record is written by the domain's owner.
 *
 * Fails closed, like the ranges: no answer, a slow or failing resolver, a private address, a
 * runtime without DNS, too many lookups at once: "out", which never verifies. A lookup is made
 * only for a request it could let through (the policy allows the crawler), once per address for
 * `ttlMs`, at most `maxLookups` at a time, two per network and four per block of networks, and the
 * cache holds at most `maxAddresses` addresses of each kind (confirmed or not): a crowd of made-up
 * crawlers from many addresses costs a bounded number of DNS queries and memory. Networks where a
 * crawler was confirmed keep room of their own, and confirmed answers are never pushed out by
 * others; a crowd from many blocks can still keep crawlers of networks not yet confirmed here
 * unverified (charged, never served) while it lasts.
 */

import { refusedAddress, withinDeadline } from '@crawlgate/core';
import type { AddressCheck } from './crawler-ips';
import { parseIp } from './ip-prefix';
import { MAX_TIMER_MS, numberOptions } from './number-options';

/**
 * The three queries made; Node's `dns.promises.Resolver` is one. (Not its reverse(): that reads
 * /etc/hosts first and reports a timeout or a failing server as "no such name".)
 */
export interface DnsResolver {
  resolvePtr(name: string): Promise<string[]>;
  resolve4(hostname: string): Promise<string[]>;
  resolve6(hostname: string): Promise<string[]>;
}

export interface ReverseDnsOptions {
  /** DNS servers ("127.0.0.1:5353"); default the system's. Ignored with `resolver`. */
  servers?: string[];
  /** Per address, PTR and forward queries together; default 2000 ms. */
  timeoutMs?: number;
  /** How long an address's answer is kept, verified or not; default 1 h. */
  ttlMs?: number;
  /** How long a failed lookup (timeout, server failure) keeps the address unverified; default 60 s. */
  retryMs?: number;
  /** Addresses whose answers are kept; default 10,000. */
  maxAddresses?: number;
  /**
   * Lookups in flight at once for addresses of networks where no crawler was confirmed yet (as many
   * again for those where one was); beyond, a request is not verified (charged, never allowed); default 32.
   */
  maxLookups?: number;
  /** Default: Node's resolver (`dns.promises.Resolver`), where the runtime has one. */
  resolver?: DnsResolver;
  now?: () => number;
}

export interface ReverseDns {
  /**
   * Undefined when the catalogue gives `crawler` no domains. `lookUp`: whether the answer could
   * let the request through; without it, only a kept answer is read (else "out").
   */
  check(crawler: string, address: string | undefined, lookUp: boolean): AddressCheck | undefined;
  /** Settles when the lookup of `address` ends (at most `timeoutMs`); never rejects. */
  settled(address: string | undefined): Promise<void>;
}

interface Answer {
  /** PTR names of the address that resolve back to it, lower case, no trailing dot. */
  confirmed: readonly string[];
  expiresAt: number;
}

/** PTR names read per address, and forward queries made: a reverse zone can list many. */
const MAX_NAMES = 4;
/** Lookups at once from one network (an IPv4 /24, an IPv6 /48): what one party holds many addresses of. */
const MAX_LOOKUPS_PER_NETWORK = 2;
/** Lookups at once from a network where a crawler was confirmed before: its operator's, which crawls from many addresses. */
const MAX_LOOKUPS_PER_CRAWLER_NETWORK = 8;
/** Lookups at once from one block of networks (an IPv4 /16, an IPv6 /32: a tunnel broker's /48s), outside crawlers' networks. */
const MAX_LOOKUPS_PER_BLOCK = 4;

export function createReverseDns(
  domainsByCrawler: ReadonlyMap<string, readonly string[]>,
  options: ReverseDnsOptions = {},
  warn: (message: string) => void = () => undefined,
): ReverseDns {
  const number = numberOptions(options, 'crawlerIps.reverseDns', warn);
  const timeoutMs = number('timeoutMs', 2000, MAX_TIMER_MS);
  const ttlMs = number('ttlMs', 3600_000);
  const retryMs = number('retryMs', 60_000);
  const maxAddresses = number('maxAddresses', 10_000);
  const maxLookups = number('maxLookups', 32);
  const now = options.now ?? Date.now;
  let warnedNoResolver = false;
  // Servers it cannot use are said once, as the reason there is no resolver.
  const resolver =
    options.resolver ??
    nodeResolver(options.servers, timeoutMs, (message) => {
      warnedNoResolver = true;
      warn(message);
    });
  // Every catalogue domain: a PTR name under none of them is never looked up forward.
  const allDomains = [...new Set([...domainsByCrawler.values()].flat())];

  // Confirmed and unconfirmed answers are kept apart, each bounded: a crowd of made-up addresses
  // pushes out only its own kind, never the answers that let real crawlers through.
  const confirmedAnswers = new Map<bigint, Answer>();
  const otherAnswers = new Map<bigint, Answer>();
  /** Networks where a crawler was confirmed: their lookups have slots of their own. */
  const crawlerNetworks = new Map<bigint, true>();
  const lookups = new Map<bigint, Promise<void>>();
  const lookupsByNetwork = new Map<bigint, number>();
  const lookupsByBlock = new Map<bigint, number>();

  function keep(key: bigint, answer: Answer): void {
    confirmedAnswers.delete(key);
    otherAnswers.delete(key);
    if (answer.confirmed.length > 0) {
      boundedSet(confirmedAnswers, key, answer, maxAddresses);
      boundedSet(crawlerNetworks, networkOf(key), true, maxAddresses);
    } else boundedSet(otherAnswers, key, answer, maxAddresses);
  }

  /**
   * Whether a lookup for `key` may start: per network, per block of networks and all together; a
   * crawler's networks with room of their own.
   */
  function mayLookUp(key: bigint): boolean {
    const known = crawlerNetworks.has(networkOf(key));
    if (known)
      return (
        inFlight(lookupsByNetwork, networkOf(key)) < MAX_LOOKUPS_PER_CRAWLER_NETWORK && lookups.size < 2 * maxLookups
      );
    return (
      inFlight(lookupsByNetwork, networkOf(key)) < MAX_LOOKUPS_PER_NETWORK &&
      inFlight(lookupsByBlock, blockOf(key)) < MAX_LOOKUPS_PER_BLOCK &&
      lookups.size < maxLookups
    );
  }

  function start(key: bigint): void {
    const network = networkOf(key);
    // Only lookups outside crawlers' networks count against their block: a confirmed network of an
    // operator never takes the room of its other networks.
    const block = crawlerNetworks.has(network) ? undefined : blockOf(key);
    count(lookupsByNetwork, network, 1);
    if (block !== undefined) count(lookupsByBlock, block, 1);
    // Past the deadline its slot is free: the lookup asks nothing more (a zone answering just in time cannot add queries).
    const lookupState = { over: false };
    const lookup = withinDeadline(confirmedNames(key, lookupState), timeoutMs) // the gate's own: a resolver may hang
      .then(
        (confirmed) => keep(key, { confirmed, expiresAt: now() + ttlMs }),
        // A timeout or a failing server says nothing of the address: asked again after retryMs.
        () => keep(key, { confirmed: [], expiresAt: now() + retryMs }),
      )
      .catch(() => undefined) // a clock that throws: the address stays unknown
      .finally(() => {
        lookupState.over = true;
        lookups.delete(key);
        count(lookupsByNetwork, network, -1);
        if (block !== undefined) count(lookupsByBlock, block, -1);
      });
    lookups.set(key, lookup);
  }

  /** The address's PTR names under a catalogue domain that resolve back to it; none once `state.over`. */
  async function confirmedNames(key: bigint, state: { over: boolean }): Promise<string[]> {
    const names = (await resolver!.resolvePtr(reverseName(key)).catch(noRecord))
      .map(hostName)
      .filter((name): name is string => name !== null && allDomains.some((domain) => isUnder(name, domain)))
      .slice(0, MAX_NAMES);
    const v4 = isIpv4(key);
    const confirmed: string[] = [];
    for (const name of names) {
      if (state.over) return [];
      const forward = await (v4 ? resolver!.resolve4(name) : resolver!.resolve6(name)).catch(noRecord);
      if (forward.some((text) => parseIp(text) === key)) confirmed.push(name);
    }
    return confirmed;
  }

  return {
    check(crawler, address, lookUp) {
      const domains = domainsByCrawler.get(crawler);
      if (!domains) return undefined;
      const key = address === undefined ? null : parseIp(address);
      if (key === null) return 'out';
      // Only public addresses are ever looked up, so a kept answer or a lookup needs no check of its address.
      const answer = confirmedAnswers.get(key) ?? otherAnswers.get(key);
      if (answer && answer.expiresAt > now())
        return answer.confirmed.some((name) => domains.some((domain) => isUnder(name, domain))) ? 'in' : 'out';
      if (lookups.has(key)) return 'loading';
      if (!lookUp) return 'out';
      // A private or loopback address has no public name to confirm: a proxy the framework does not trust.
      if (refusedAddress(ipText(key, address!), false) !== null || !mayLookUp(key)) return 'out';
      if (!resolver) {
        if (!warnedNoResolver) {
          warnedNoResolver = true;
          warn(
            'this runtime has no DNS resolver for crawlerIps.reverseDns (pass one as crawlerIps.reverseDns.resolver); crawlers verified by reverse DNS are not allowed meanwhile',
          );
        }
        return 'out';
      }
      start(key);
      return 'loading';
    },
    settled(address) {
      const key = address === undefined ? null : parseIp(address);
      return (key !== null && lookups.get(key)) || Promise.resolve();
    },
  };
}

/** No such name, or no record of that type: an empty answer. Anything else (timeout, server failure) is thrown on. */
function noRecord(error: unknown): string[] {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ENOTFOUND' || code === 'ENODATA') return [];
  throw error;
}

/** `name` is `domain` or a name under it (a label boundary: "evilyandex.ru" is not under "yandex.ru"). */
const isUnder = (name: string, domain: string) => name === domain || name.endsWith(`.${domain}`);

/** A PTR answer as a host name (lower case, no trailing dot); null when it is not one. */
function hostName(text: unknown): string | null {
  if (typeof text !== 'string') return null;
  const name = text.toLowerCase().replace(/\.$/, '');
  return name.length <= 253 && /^(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/.test(name)
    ? name
    : null;
}

const IPV4_MAPPED_HIGH = 0xffffn;
const isIpv4 = (key: bigint) => key >> 32n === IPV4_MAPPED_HIGH;
/** The address's /24 (IPv4) or /48 (IPv6). */
const networkOf = (key: bigint) => (isIpv4(key) ? key >> 8n : key >> 80n);
/** The address's /16 (IPv4) or /32 (IPv6). */
const blockOf = (key: bigint) => (isIpv4(key) ? key >> 16n : key >> 96n);

const inFlight = (map: Map<bigint, number>, key: bigint) => map.get(key) ?? 0;

/** Adds `by` to `key`'s count, forgetting it at zero. */
function count(map: Map<bigint, number>, key: bigint, by: number): void {
  const total = inFlight(map, key) + by;
  if (total > 0) map.set(key, total);
  else map.delete(key);
}

/** Sets `key`, the oldest entry making room beyond `max` (a Map iterates in insertion order). */
function boundedSet<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  if (map.size >= max) map.delete(map.keys().next().value as K);
  map.set(key, value);
}

/** The address as the private-address check reads it: an IPv4-mapped IPv6 address in its IPv4 form. */
function ipText(key: bigint, address: string): string {
  if (!isIpv4(key)) return address.replace(/^\[|\]$/g, '');
  return [24n, 16n, 8n, 0n].map((shift) => String((key >> shift) & 255n)).join('.');
}

/** The name whose PTR record holds the address's host name: "4.3.2.1.in-addr.arpa", or 32 nibbles under ip6.arpa. */
export function reverseName(key: bigint): string {
  if (isIpv4(key)) return `${[0n, 8n, 16n, 24n].map((shift) => String((key >> shift) & 255n)).join('.')}.in-addr.arpa`;
  const nibbles: string[] = [];
  for (let shift = 0n; shift < 128n; shift += 4n) nibbles.push(((key >> shift) & 15n).toString(16));
  return `${nibbles.join('.')}.ip6.arpa`;
}

/** Node's resolver, when the runtime has node:dns (Node 20.16+, Bun, Deno); undefined elsewhere. */
function nodeResolver(
  servers: string[] | undefined,
  timeoutMs: number,
  warn: (message: string) => void,
): DnsResolver | undefined {
  type NodeDns = {
    promises: {
      Resolver: new (options: {
        timeout: number;
        tries: number;
      }) => DnsResolver & { setServers(servers: string[]): void };
    };
  };
  const getBuiltinModule = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process
    ?.getBuiltinModule;
  let dns: NodeDns | undefined;
  try {
    dns = getBuiltinModule?.('node:dns') as NodeDns | undefined;
  } catch {
    return undefined;
  }
  if (!dns?.promises?.Resolver) return undefined;
  try {
    const resolver = new dns.promises.Resolver({ timeout: Math.ceil(timeoutMs), tries: 1 });
    if (servers !== undefined) resolver.setServers(servers);
    return resolver;
  } catch (error) {
    // Servers it cannot use (not addresses, not a list): no resolver, so nothing is verified, with a warning.
    warn(
      `crawlerIps.reverseDns.servers: ${(error as Error).message}; crawlers verified by reverse DNS are not allowed`,
    );
    return undefined;
  }
}

/** The catalogue's crawlers that are verified by host name, by name: their domains, lower case. */
export function catalogueReverseDns(
  entries: ReadonlyArray<{ name: string; reverseDns?: readonly string[] }>,
): ReadonlyMap<string, readonly string[]> {
  return new Map(
    entries.flatMap((entry) =>
      entry.reverseDns ? [[entry.name, entry.reverseDns.map((domain) => domain.toLowerCase())] as const] : [],
    ),
  );
}
