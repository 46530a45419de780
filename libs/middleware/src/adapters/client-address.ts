/*
 * The client's address as the framework read it (Express's req.ip, Fastify's request.ip), unless
 * the framework takes it from any X-Forwarded-For: Express's "trust proxy" or Fastify's trustProxy
 * trusting every address (true, a function saying yes to all, a hop count past any real chain). A
 * client writes that header as it likes, and one of Google's addresses there would pass a scraper
 * as Googlebot. Then the gate judges crawlers by the connection's address, and says so once.
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

export function createClientAddress(logger: Pick<CrawlgateLogger, 'warn'>): ClientAddress {
  let warned = false;
  return (request) => {
    const fastify = request.raw !== undefined && request.raw !== null;
    if (!(fastify ? fastifyTrustsEveryForwarder(request) : expressTrustsEveryForwarder(request.app)))
      return request.ip ?? request.socket?.remoteAddress;
    if (!warned) {
      warned = true;
      logger.warn(
        `crawlgate: this app takes the client's address from the first X-Forwarded-For address of anyone (Express "trust proxy" or Fastify trustProxy true, a function trusting every address, or a hop count past any real chain), which a client writes as it likes: crawlers are judged by the connection's address instead. Trust your proxies by address or by their exact hop count, or set crawlerIps.clientIp`,
      );
    }
    const socket = fastify ? (request.raw as FrameworkRequest).socket : request.socket;
    return socket?.remoteAddress;
  };
}

/** Each compiled `trust proxy fn`'s verdict: Express reads the setting on every request (an app may change it), judged once. */
const expressVerdicts = new WeakMap<object, boolean>();

/**
 * Whether an Express app's `trust proxy` trusts any address at any depth of X-Forwarded-For (`true`,
 * or a hop count of 64 or more: no proxy chain is that long): its req.ip is then the client's own word.
 */
function expressTrustsEveryForwarder(app: unknown): boolean {
  if ((typeof app !== 'object' && typeof app !== 'function') || app === null) return false; // an Express app is a function
  const get = (app as { get?: unknown }).get;
  const trust =
    typeof get === 'function' ? (get as (setting: string) => unknown).call(app, 'trust proxy fn') : undefined;
  if (typeof trust !== 'function') return false;
  let trusts = expressVerdicts.get(trust);
  if (trusts === undefined) {
    // A hop count n is compiled to `index < n`: index 63 is trusted from 64 hops up. Any truthy answer
    // trusts (proxy-addr's reading), and an app may listen on IPv6 only, so both kinds are asked.
    const trusted = trust as (address: string, index: number) => unknown;
    trusts = PROBES.some(({ peer }) => Boolean(trusted(peer, 63)));
    expressVerdicts.set(trust, trusts);
  }
  return trusts;
}

/** Each Fastify request class's verdict: Fastify builds the `ip` getter from trustProxy once per app. */
const fastifyVerdicts = new WeakMap<object, boolean>();

/**
 * Whether a Fastify request's `ip` trusts any address at any depth of X-Forwarded-For. A plugin
 * cannot read the app's trustProxy, so its `ip` getter is asked: given a request from a public
 * address forwarding 64 others, one that answers the furthest trusted every hop.
 */
function fastifyTrustsEveryForwarder(request: FrameworkRequest): boolean {
  const prototype = Object.getPrototypeOf(request) as object | null;
  if (prototype === null) return false;
  let trusts = fastifyVerdicts.get(prototype);
  if (trusts === undefined) {
    const ip = ipGetterOf(prototype);
    trusts = ip !== undefined && PROBES.some((probe) => answersFurthest(ip, probe));
    fastifyVerdicts.set(prototype, trusts);
  }
  return trusts;
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

/** A public (documentation) address forwarding 64 others: no real chain of proxies is that long. */
const PROBES: Probe[] = [
  { peer: '203.0.113.7', forwarded: Array.from({ length: 64 }, (_, i) => `198.51.100.${i + 1}`) },
  { peer: '2001:db8::7', forwarded: Array.from({ length: 64 }, (_, i) => `2001:db8:1::${(i + 1).toString(16)}`) },
];

function answersFurthest(ip: () => unknown, { peer, forwarded }: Probe): boolean {
  const socket = { remoteAddress: peer };
  const headers = { 'x-forwarded-for': forwarded.join(', ') };
  const raw = { socket, connection: socket, headers };
  try {
    return ip.call({ raw, socket, headers }) === forwarded[0];
  } catch {
    return false; // a getter that cannot read a plain request: its app's requests say what they say
  }
}
