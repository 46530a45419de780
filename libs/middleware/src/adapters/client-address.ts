/*
 * The client's address as the framework read it (Express's req.ip, Fastify's request.ip), unless
 * the framework takes it from any X-Forwarded-For: Express's "trust proxy" or Fastify's trustProxy
 * trusting every address (true, a function saying yes to all, a hop count past any real chain), or
 * every address behind a proxy it trusts. A client writes that header as it likes, and one of
 * Google's addresses there would pass a scraper as Googlebot. Then the gate judges crawlers by the
 * connection's address, and says so once. So it does with a req.ip the framework did not set (a
 * property of the request itself: @fastify/middie's copy of Fastify's, request-ip's, a hook's; a
 * getter of the app's own, which answers what the framework's reading of the connection and
 * X-Forwarded-For would not) or could not read (a trust function that throws): what set it, and
 * how, is unknown. The adapters read it only when the gate needs it (a crawler). An app trusting
 * a hop count (any address at some depth) is warned once: only a proxy every request passes makes
 * it safe.
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
  headers?: Record<string, unknown>;
}

export type ClientAddress = (request: FrameworkRequest) => string | undefined;

/** The adapter's framework; NestJS's adapter leaves it to the request (Express's has its app). */
export type Framework = 'express' | 'fastify';

/**
 * What the framework makes of X-Forwarded-For: trusted from known proxies only, from any address to
 * some depth (a hop count), from anyone at any depth; unknown: a req.ip the framework did not set,
 * or could not read.
 */
type Trust = 'proxies' | 'first hop' | 'everyone' | 'unknown' | 'unreadable';

const WARNINGS: Record<Exclude<Trust, 'proxies'>, string> = {
  'first hop': `crawlgate: this app takes the client's address from the X-Forwarded-For of any address (a hop count, or a function trusting any address at some depth): safe only if no request reaches the app but through your proxies, else a client writes the address it likes. Trust your proxies by address where you can`,
  everyone: `crawlgate: this app takes the client's address from the first X-Forwarded-For address of anyone (Express "trust proxy" or Fastify trustProxy true, a function trusting every address or every one behind your proxy, or a hop count past any real chain), which a client writes as it likes: crawlers are judged by the connection's address instead. Trust your proxies by address or by their exact hop count, or set crawlerIps.clientIp`,
  unknown: `crawlgate: req.ip differs from the connection's address and the framework did not set it (a property of the request itself: the Express adapter in @fastify/middie or Connect, a middleware or hook such as request-ip's): how it was read is unknown, so crawlers are judged by the connection's address instead. On Fastify use crawlgateFastify, or set crawlerIps.clientIp`,
  unreadable: `crawlgate: reading req.ip threw (a trust proxy function that throws, on an IPv6 or dual-stack server an IPv4-only list): crawlers are judged by the connection's address instead`,
};

export function createClientAddress(logger: Pick<CrawlgateLogger, 'warn'>, framework?: Framework): ClientAddress {
  const warned = new Set<Trust>();
  return (request) => {
    // Told, not guessed from a `raw` property: Express apps keep a request's raw body there.
    const fastify = framework ? framework === 'fastify' : typeof request.app !== 'function';
    const socket = (fastify ? (request.raw as FrameworkRequest | undefined) : request)?.socket?.remoteAddress;
    const read = readIp(request);
    const trust =
      read === UNREADABLE
        ? 'unreadable'
        : fastify
          ? fastifyTrust(request, read, socket)
          : expressTrust(request, read, socket);
    if (trust !== 'proxies' && !warned.has(trust)) {
      warned.add(trust);
      logger.warn(WARNINGS[trust]);
    }
    return trust === 'proxies' || trust === 'first hop' ? ((read as string | undefined) ?? socket) : socket;
  };
}

const UNREADABLE = Symbol('req.ip threw');
/** What a getter that cannot be asked answers: its setting is unknown. */
const UNASKABLE = Symbol('the ip getter threw');

/** The request's ip, read once: a getter may throw (a trust function failing on the address it is given). */
function readIp(request: FrameworkRequest): string | undefined | typeof UNREADABLE {
  try {
    return request.ip;
  } catch {
    return UNREADABLE;
  }
}

/**
 * What the framework answers for a request from `peer` whose X-Forwarded-For is `chain` (the
 * nearest hop last): the address it would take as the client's.
 */
type Answer = (peer: string, chain: string[]) => unknown;

/**
 * The verdict on a request whose address the framework read as `ip`. The connection's address is
 * believed; any other only if the framework's own reading of the connection and X-Forwarded-For
 * alone gives it: a getter of its own (set on the request, on a prototype put under it, or on the
 * app's request as Express's guide shows) reading another header is unknown. Then the setting's
 * verdict, and for a connection address it trusts, what it believes behind that address.
 */
function judgeRequest(
  verdicts: Verdicts,
  request: FrameworkRequest,
  ip: string | undefined,
  socket: string | undefined,
): Trust {
  if (ip === undefined || ip === socket) return verdicts.public === 'unknown' ? 'unknown' : 'proxies';
  if (socket === undefined || Object.hasOwn(request, 'ip')) return 'unknown';
  const chain = forwardedChain(request.headers?.['x-forwarded-for']);
  if (verdicts.answer(socket, chain) !== ip) return 'unknown';
  const verdict = verdictOf(verdicts, socket);
  return verdict === 'proxies' && takenFromAStranger(verdicts.answer, socket, chain, ip) ? 'everyone' : verdict;
}

/**
 * Whether the address taken would be taken as well with a stranger in the way: connecting itself
 * with this X-Forwarded-For, or standing just nearer than it in the chain. Then the setting trusts
 * whoever sent it (every address but some, a lone address believed), whatever it made of the
 * addresses it was judged on.
 */
function takenFromAStranger(answer: Answer, socket: string, chain: string[], ip: string): boolean {
  const at = chain.lastIndexOf(ip);
  return PUBLIC_PEERS.some(
    (stranger) =>
      answer(stranger, chain) === ip ||
      (at >= 0 && answer(socket, [...chain.slice(0, at + 1), stranger, ...chain.slice(at + 1)]) === ip),
  );
}

/** X-Forwarded-For's addresses, the nearest hop last, as proxy-addr splits them: spaces trimmed, empty entries dropped. */
function forwardedChain(header: unknown): string[] {
  const text = Array.isArray(header) ? header.join(',') : typeof header === 'string' ? header : '';
  return text
    .split(',')
    .map((address) => address.replace(/^ +| +$/g, ''))
    .filter((address) => address !== '');
}

/** A trust setting's verdicts: for arbitrary peers, and for each connection address it trusts. */
interface Verdicts {
  answer: Answer;
  public: Trust;
  peers: Map<string, Trust>;
}

/** The setting's verdicts, judged once per setting (`key`: Express's trust function, Fastify's request class). */
function verdictsOf(cache: WeakMap<object, Verdicts>, key: object, makeAnswer: () => Answer): Verdicts {
  let verdicts = cache.get(key);
  if (verdicts === undefined) {
    const answer = makeAnswer();
    verdicts = { answer, public: judge(answer, PUBLIC_PEERS, true), peers: new Map() };
    cache.set(key, verdicts);
  }
  return verdicts;
}

/** Trusted connection addresses judged per setting: the app's proxies (a CDN's edges, a cluster's pods); the oldest judged again. */
const MAX_PEERS_JUDGED = 1024;

/**
 * The verdict for a request the framework read as from `ip`: the setting's, or when it took `ip`
 * from X-Forwarded-For (it trusts this connection's address), what it believes behind that address.
 */
function verdictOf(verdicts: Verdicts, socket: string): Trust {
  if (verdicts.public !== 'proxies') return verdicts.public;
  let verdict = verdicts.peers.get(socket);
  if (verdict === undefined) {
    verdict = judge(verdicts.answer, [socket], false);
    if (verdicts.peers.size >= MAX_PEERS_JUDGED) verdicts.peers.delete(verdicts.peers.keys().next().value!);
    verdicts.peers.set(socket, verdict);
  }
  return verdict;
}

/**
 * Ordinary public addresses, one connecting and 64 forwarded (past any real chain of proxies), from
 * Tor's exit ranges: public, and no list of proxies trusts them (a list of Google's, or a CDN's,
 * legitimately may trust those). Not documentation addresses: a getter keeping only public ones, or
 * a setting trusting all that are not, reads those as reserved and would be judged on addresses it
 * ignores.
 */
const PUBLIC_PEERS = ['185.220.100.7', '2a0b:f4c0::7'];
const FORWARDED_CHAINS = [
  Array.from({ length: 64 }, (_, i) => `185.220.101.${i + 1}`),
  Array.from({ length: 64 }, (_, i) => `2a0b:f4c2::${(i + 1).toString(16)}`),
];

/**
 * What a setting trusts, from these peers: everyone, when it takes the furthest of 64 forwarded
 * public addresses; a depth of any addresses, when it takes one beyond what the peer itself wrote
 * (for an arbitrary peer, trusting it at all is that: a hop count); else proxies it knows. Unknown
 * when its answer is neither the peer nor a forwarded address: it reads something else (another
 * header, or the request it closed over rather than the one it is asked of), or cannot be asked.
 */
function judge(answer: Answer, peers: string[], arbitraryPeers: boolean): Trust {
  const pairs = peers.flatMap((peer, i) =>
    arbitraryPeers ? [{ peer, chain: FORWARDED_CHAINS[i] }] : FORWARDED_CHAINS.map((chain) => ({ peer, chain })),
  );
  const asked = (peer: string, chain: string[]) => {
    const taken = answer(peer, chain);
    return taken === peer || chain.includes(taken as string) ? (taken as string) : UNASKABLE;
  };
  const furthest = pairs.map(({ peer, chain }) => asked(peer, chain));
  const depths = pairs.map(({ peer, chain }) => ({ peer, chain: chain.slice(-2) }));
  const near = depths.map(({ peer, chain }) => asked(peer, chain));
  if ([...furthest, ...near].includes(UNASKABLE)) return 'unknown';
  if (furthest.some((taken, i) => taken === pairs[i].chain[0])) return 'everyone';
  const trustsADepth = near.some((taken, i) => {
    const [further, nearest] = depths[i].chain;
    return taken === further || (arbitraryPeers && taken === nearest);
  });
  return trustsADepth ? 'first hop' : 'proxies';
}

/** Each compiled `trust proxy fn`'s verdicts: Express reads the setting on every request (an app may change it). */
const expressVerdicts = new WeakMap<object, Verdicts>();

/**
 * What an Express app's `trust proxy` trusts, asked of its compiled function the way proxy-addr
 * walks X-Forwarded-For. No Express app: a req.ip other than the connection's was set by something unknown.
 */
function expressTrust(request: FrameworkRequest, ip: string | undefined, socket: string | undefined): Trust {
  // An Express app is a function with get().
  const { app } = request;
  const get =
    (typeof app === 'object' || typeof app === 'function') && app !== null ? (app as { get?: unknown }).get : undefined;
  const trust =
    typeof get === 'function' ? (get as (setting: string) => unknown).call(app, 'trust proxy fn') : undefined;
  if (typeof trust !== 'function') return ip === undefined || ip === socket ? 'proxies' : 'unknown';
  return judgeRequest(
    verdictsOf(expressVerdicts, trust, () => proxyAddrWalk(trust as TrustFunction)),
    request,
    ip,
    socket,
  );
}

type TrustFunction = (address: string, index: number) => unknown;

/**
 * proxy-addr's reading: from the connection's address outwards, each address trusted (any truthy
 * answer) passes on to the next; the first not trusted, or the furthest, is the client. A call
 * that throws (an IPv4-only list given an IPv6 address) trusts not.
 */
function proxyAddrWalk(trust: TrustFunction): Answer {
  return (peer, chain) => {
    const addresses = [peer, ...[...chain].reverse()];
    let at = 0;
    while (at < addresses.length - 1 && trusts(trust, addresses[at], at)) at++;
    return addresses[at];
  };
}

function trusts(trust: TrustFunction, address: string, index: number): boolean {
  try {
    return Boolean(trust(address, index));
  } catch {
    return false;
  }
}

/** Each Fastify request class's verdicts: Fastify builds the `ip` getter from trustProxy once per app. */
const fastifyVerdicts = new WeakMap<object, Verdicts>();

/**
 * What a Fastify request's `ip` trusts. A plugin cannot read the app's trustProxy, so its `ip`
 * getter is asked, with requests made up of the addresses to judge.
 */
function fastifyTrust(request: FrameworkRequest, ip: string | undefined, socket: string | undefined): Trust {
  const prototype = Object.getPrototypeOf(request) as object | null;
  if (prototype === null) return ip === undefined || ip === socket ? 'proxies' : 'unknown';
  return judgeRequest(
    verdictsOf(fastifyVerdicts, prototype, () => askingGetter(ipGetterOf(prototype))),
    request,
    ip,
    socket,
  );
}

function ipGetterOf(prototype: object): (() => unknown) | undefined {
  for (let at: object | null = prototype; at !== null; at = Object.getPrototypeOf(at) as object | null) {
    const property = Object.getOwnPropertyDescriptor(at, 'ip');
    if (property) return property.get;
  }
  return undefined;
}

/** Fastify's `ip` getter asked of a plain request from `peer` forwarding `chain`; one that throws cannot be judged. */
function askingGetter(getter: (() => unknown) | undefined): Answer {
  if (getter === undefined) return () => UNASKABLE;
  return (peer, chain) => {
    const socket = { remoteAddress: peer };
    const headers = chain.length > 0 ? { 'x-forwarded-for': chain.join(', ') } : {};
    const raw = { socket, connection: socket, headers };
    try {
      return getter.call({ raw, socket, headers });
    } catch {
      return UNASKABLE;
    }
  };
}
