/*
 * The client's address as the framework read it (Express's req.ip, Fastify's request.ip), unless
 * the framework takes it from any X-Forwarded-For: Express's "trust proxy" or Fastify's trustProxy
 * trusting every address (true, a function saying yes to all, a hop count past any real chain). A
 * client writes that header as it likes, and one of Google's addresses there would pass a scraper
 * as Googlebot. Then the gate judges crawlers by the connection's address, and says so once. So it
 * does with a req.ip that no Express app set (the Express adapter mounted in @fastify/middie, which
 * copies Fastify's, or in Connect): what set it, and how, is unknown. An app trusting a hop count
 * (any address at the first hop) is warned once: only a proxy every request passes makes it safe.
 */

import type { CrawlgateLogger } from '../crawlgate';

/** An Express or Fastify request (the adapters' and NestJS's). */
export interface FrameworkRequest {
  ip?: string;
  socket?: { remoteAddress?: string } | null;
  /** Fastify's only: the Node request under it. */
  raw?: unknown;
  /** Express's only: its app, whose settings say what req.ip is. */
  app?: unknown;
}

export type ClientAddress = (request: FrameworkRequest) => string | undefined;

/**
 * What the framework makes of X-Forwarded-For: trusted from known proxies only, from any address at
 * the first hop (a hop count), from anyone at any depth; unknown: a req.ip no Express app set.
 */
type Trust = 'proxies' | 'first hop' | 'everyone' | 'unknown';

const WARNINGS: Record<Exclude<Trust, 'proxies'>, string> = {
  'first hop': `crawlgate: this app takes the client's address from the X-Forwarded-For of any address (a hop count, or a function trusting the first hop): safe only if no request reaches the app but through your proxies, else a client writes the address it likes. Trust your proxies by address where you can`,
  everyone: `crawlgate: this app takes the client's address from the first X-Forwarded-For address of anyone (Express "trust proxy" or Fastify trustProxy true, a function trusting every address, or a hop count past any real chain), which a client writes as it likes: crawlers are judged by the connection's address instead. Trust your proxies by address or by their exact hop count, or set crawlerIps.clientIp`,
  unknown: `crawlgate: req.ip differs from the connection's address and no Express app set it (the Express adapter in @fastify/middie or Connect): how it was read is unknown, so crawlers are judged by the connection's address instead. On Fastify use crawlgateFastify, or set crawlerIps.clientIp`,
};

export function createClientAddress(logger: Pick<CrawlgateLogger, 'warn'>): ClientAddress {
  const warned = new Set<Trust>();
  return (request) => {
    const fastify = request.raw !== undefined && request.raw !== null;
    const socket = (fastify ? (request.raw as FrameworkRequest).socket : request.socket)?.remoteAddress;
    const trust = fastify ? fastifyTrust(request) : expressTrust(request.app, request.ip, socket);
    if (trust !== 'proxies' && !warned.has(trust)) {
      warned.add(trust);
      logger.warn(WARNINGS[trust]);
    }
    return trust === 'everyone' || trust === 'unknown' ? socket : (request.ip ?? socket);
  };
}

/** Each compiled `trust proxy fn`'s verdict: Express reads the setting on every request (an app may change it), judged once. */
const expressVerdicts = new WeakMap<object, Trust>();

/**
 * What an Express app's `trust proxy` trusts: a public address at index 63 of X-Forwarded-For
 * (`true`, or a hop count of 64 or more: no proxy chain is that long) makes its req.ip the client's
 * own word. No Express app: a req.ip other than the connection's was set by something unknown.
 */
function expressTrust(app: unknown, ip: string | undefined, socket: string | undefined): Trust {
  // An Express app is a function with get().
  const get =
    (typeof app === 'object' || typeof app === 'function') && app !== null ? (app as { get?: unknown }).get : undefined;
  if (typeof get !== 'function') return ip === undefined || ip === socket ? 'proxies' : 'unknown';
  const trust = (get as (setting: string) => unknown).call(app, 'trust proxy fn');
  if (typeof trust !== 'function') return 'proxies';
  let verdict = expressVerdicts.get(trust);
  if (verdict === undefined) {
    // A hop count n is compiled to `index < n`. Any truthy answer trusts (proxy-addr's reading), and an
    // app may listen on IPv6 only, so both kinds are asked; one that throws (an IPv4-only list) trusts not.
    const trusts = (index: number) =>
      PROBES.some(({ peer }) => {
        try {
          return Boolean((trust as (address: string, index: number) => unknown)(peer, index));
        } catch {
          return false;
        }
      });
    verdict = trusts(63) ? 'everyone' : trusts(0) ? 'first hop' : 'proxies';
    expressVerdicts.set(trust, verdict);
  }
  return verdict;
}

/** Each Fastify request class's verdict: Fastify builds the `ip` getter from trustProxy once per app. */
const fastifyVerdicts = new WeakMap<object, Trust>();

/**
 * What a Fastify request's `ip` trusts. A plugin cannot read the app's trustProxy, so its `ip`
 * getter is asked: given a request from a public address forwarding 64 others, one that answers the
 * furthest trusted every hop; forwarding one, one that answers it trusts any address at the first.
 */
function fastifyTrust(request: FrameworkRequest): Trust {
  const prototype = Object.getPrototypeOf(request) as object | null;
  if (prototype === null) return 'proxies';
  let verdict = fastifyVerdicts.get(prototype);
  if (verdict === undefined) {
    const ip = ipGetterOf(prototype);
    const trusts = (hops: number) => ip !== undefined && PROBES.some((probe) => answersFurthest(ip, probe, hops));
    verdict = trusts(64) ? 'everyone' : trusts(1) ? 'first hop' : 'proxies';
    fastifyVerdicts.set(prototype, verdict);
  }
  return verdict;
}

function ipGetterOf(prototype: object): (() => unknown) | undefined {
  for (let at: object | null = prototype; at !== null; at = Object.getPrototypeOf(at) as object | null) {
    const property = Object.getOwnPropertyDescriptor(at, 'ip');
    if (property) return property.get;
  }
  return undefined;
}

interface Probe {
  peer: string;
  forwarded: string[];
}

/** A public (documentation) address forwarding up to 64 others: no real chain of proxies is that long. */
const PROBES: Probe[] = [
  { peer: '203.0.113.7', forwarded: Array.from({ length: 64 }, (_, i) => `198.51.100.${i + 1}`) },
  { peer: '2001:db8::7', forwarded: Array.from({ length: 64 }, (_, i) => `2001:db8:1::${(i + 1).toString(16)}`) },
];

/** Whether `ip`, for a request from the probe's peer forwarding the last `hops` of its addresses, answers the furthest. */
function answersFurthest(ip: () => unknown, { peer, forwarded }: Probe, hops: number): boolean {
  const chain = forwarded.slice(-hops);
  const socket = { remoteAddress: peer };
  const headers = { 'x-forwarded-for': chain.join(', ') };
  const raw = { socket, connection: socket, headers };
  try {
    return ip.call({ raw, socket, headers }) === chain[0];
  } catch {
    return false; // a getter that cannot read a plain request: its app's requests say what they say
  }
}
