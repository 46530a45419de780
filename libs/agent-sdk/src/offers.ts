import {
  BATCH_SETTLEMENT_SCHEME,
  cappedJson,
  decodeBase64Json,
  findNetworkByX402,
  holdsEip55Checksum,
  isEvmAddress,
  embeddedIpv4,
  isLoopbackAddress,
  isLoopbackHost,
  MAX_AUTHORIZATION_SECONDS,
  MAX_PAYMENT_ANSWER_BYTES,
  MAX_PAYMENT_ANSWER_MS,
  MAX_WITHDRAW_DELAY,
  MIN_WITHDRAW_DELAY,
  readGate,
  refusedAddress,
  untrusted,
  type BatchSettlementExtra,
  type ExactExtra,
  type GateOffer,
  type GateTerms,
  type Hex,
  type PaymentRequiredV2,
  type PaymentRequirementsV1,
  type PaymentRequirementsV2,
  type ResourceInfo,
  type Untrusted,
} from '@crawlgate/core';

/** One way to pay a 402, normalised from a Crawlgate gate body, an x402 v1 body or a v2 PAYMENT-REQUIRED header. */
export interface Offer {
  /** "exact": one EIP-3009 authorization per page; "batch-settlement": a voucher on an escrowed channel (x402 v2 only). */
  scheme: 'exact' | 'batch-settlement';
  version: 1 | 2;
  /** The network as the server named it (v1 name or CAIP-2), echoed back in the payment. */
  network: string;
  chainId: number;
  amount: bigint;
  asset: `0x${string}`;
  payTo: `0x${string}`;
  maxTimeoutSeconds: number;
  /** The token's EIP-712 domain, from `extra`. */
  domain: { name: string; version: string };
  /** Crawlgate gates only: where a transfer's hash can be posted. */
  verifyUrl?: string;
  /** Crawlgate gates only: the ref of the gate verifyUrl posts to, which a transfer proof is signed for. */
  gateRef?: string;
  /** Crawlgate gates only: that gate's expiry (epoch seconds) as its id says: the site's word, unchecked. */
  gateExp?: number;
  v2?: { accepted: PaymentRequirementsV2; resource: ResourceInfo };
  /** batch-settlement offers only: the channel terms of `extra`, and a corrective 402's view of the channel. */
  batch?: BatchTerms;
}

export interface BatchTerms {
  escrow: Hex;
  receiverAuthorizer: Hex;
  withdrawDelay: number;
  /** Set in x402's corrective 402: what the site says the channel has been charged. */
  channelState?: { channelId: Hex; chargedCumulativeAmount: bigint };
  /** Set in x402's corrective 402: the voucher the site says it holds for that total. */
  voucherState?: { signedMaxClaimable: bigint; signature: Hex };
}

/**
 * Every "exact" and "batch-settlement" EVM offer of a 402 response that names a chain we can sign for, v2 first: a v2
 * payment echoes its requirement (with Crawlgate's `extra.gate_id`), so a retry reaches the same gate.
 */
export async function readOffers(response: Response): Promise<Offer[]> {
  // A Crawlgate gate's 402 body (GateOffer) holds x402 v1's (PaymentRequiredV1) `accepts`, and verify_url.
  const body = untrusted<GateOffer>(await cappedJson(response, MAX_PAYMENT_ANSWER_BYTES, MAX_PAYMENT_ANSWER_MS));
  const verifyUrl = postableUrl(body?.verify_url, response.url);
  const v1 = Array.isArray(body?.accepts)
    ? body.accepts.map((r: unknown) => fromV1(untrusted<PaymentRequirementsV1>(r), verifyUrl))
    : [];
  const header = response.headers.get('payment-required');
  const required = header ? untrusted<PaymentRequiredV2>(decodeBase64Json(header)) : undefined;
  // Echoed back in the payment as the site stated it: only the site that sent it reads it.
  const resource = (required?.resource ?? { url: response.url }) as ResourceInfo;
  const v2 = Array.isArray(required?.accepts)
    ? required.accepts.map((r: unknown) => fromV2(untrusted<PaymentRequirementsV2>(r), resource, verifyUrl))
    : [];
  const gate = gateOf(verifyUrl);
  return [...v2, ...v1]
    .filter((offer): offer is Offer => offer !== null)
    .map((offer) => (gate ? withGate(offer, gate) : offer));
}

/**
 * The offer with its verify_url's gate, which must be the gate a v2 payment of it echoes (the one
 * the gate behind checks): a verify_url naming another is none, or a token of that other gate, a
 * page already bought, would pass for this payment's.
 */
function withGate(offer: Offer, gate: GateTerms): Offer {
  const echoed = offer.v2?.accepted.extra?.gate_id;
  if (echoed !== undefined && readGate(echoed)?.ref !== gate.ref) return { ...offer, verifyUrl: undefined };
  return { ...offer, gateRef: gate.ref, gateExp: gate.exp };
}

/**
 * A verify_url the agent may POST to (a payment after a site's 5xx, a transfer proof, and the API
 * it learns for profile()): https, or plain http on loopback for a page surely on this machine (a local
 * set-up); a host of the agent's own machine (loopback, a localhost name, link-local: the cloud's
 * metadata address) only for a page on this machine, one of its network (a private address, a
 * name only a local network resolves) only for a page on this machine or a network. Any other is
 * ignored: a site would have the agent POST into its machine or network. The verify_url's host is
 * read as close as it may be, the page's as far as it may be. A public name that resolves to such
 * an address is not caught: nothing is resolved here.
 */
function postableUrl(value: unknown, pageUrl: string): string | undefined {
  if (typeof value !== 'string' || !URL.canParse(value)) return undefined;
  const { protocol, hostname } = new URL(value);
  const pageHost = URL.canParse(pageUrl) ? new URL(pageUrl).hostname : undefined;
  const page = pageHost === undefined ? 'public' : pageReach(pageHost);
  if (REACH_ORDER[verifyUrlReach(hostname)] > REACH_ORDER[page]) return undefined;
  if (protocol === 'https:') return value;
  // Anyone on a network can read and rewrite plain http: only to loopback, from a page surely on this machine.
  return protocol === 'http:' && isLoopbackHost(hostname) && page === 'machine' ? value : undefined;
}

type Reach = 'machine' | 'network' | 'public';
/** How close to the agent a host is: a verify_url may be no closer than its page. */
const REACH_ORDER: Record<Reach, number> = { public: 0, network: 1, machine: 2 };
/**
 * Names only a local network resolves: RFC 6762, 6761, 8375, the common private ones, and those of
 * clusters, service meshes and containers (.local covers Kubernetes' .cluster.local).
 */
const LOCAL_NAME = /\.(?:local|internal|lan|home\.arpa|localdomain|intranet|corp|home|svc|consul|localnet|docker)$/i;
/** Tailscale's names: its network's, though Funnel serves some to the internet, so a page there may be anyone's. */
const TAILNET_NAME = /\.ts\.net$/i;
/** Names /etc/hosts gives loopback (Debian's and Ubuntu's ip6-*, Red Hat's and Amazon Linux's localhost4 and 6). */
const LOOPBACK_NAMES = new Set([
  'ip6-localhost',
  'ip6-loopback',
  'localhost4',
  'localhost6',
  'localhost.localdomain',
  'localhost4.localdomain4',
  'localhost6.localdomain6',
]);
/** Services of the agent's own host a verify_url must not name from afar: the cloud's metadata, Docker's host. */
const HOST_SERVICE_NAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'host.docker.internal',
  'gateway.docker.internal',
]);
/** An IPv4 address as the URL parser writes it; a name like "127.example.com" is none. */
const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;
/** 10/8, 172.16/12, 192.168/16, link-local 169.254/16 and CGNAT 100.64/10 (a carrier's or a VPN's such as Tailscale). */
const NETWORK_IPV4 =
  /^(?:10\.|192\.168\.|169\.254\.|172\.(?:1[6-9]|2\d|3[01])\.|100\.(?:6[4-9]|[7-9]\d|1[01]\d|12[0-7])\.)/;

/** How close a verify_url's host may be: read close, so what might be this machine or its network is. */
function verifyUrlReach(hostname: string): Reach {
  const name = hostname.replace(/\.+$/, ''); // "localhost." is localhost
  if (isThisMachineName(name) || HOST_SERVICE_NAMES.has(name) || name === ownHostname()) return 'machine';
  if (name.startsWith('[')) {
    if (refusedAddress(name, false) === null) return 'public';
    // Unique-local is a network's; any other refused form may be this machine (::, link-local, an embedded IPv4).
    return /^\[f[cd]/i.test(name) ? 'network' : 'machine';
  }
  if (IPV4.test(name)) {
    if (refusedAddress(name, false) === null) return 'public';
    return /^(?:0|169\.254)\./.test(name) ? 'machine' : 'network'; // 0.0.0.0 is this machine; link-local, its metadata
  }
  return isLocalName(name) || TAILNET_NAME.test(name) ? 'network' : 'public';
}

/**
 * How close a page's host surely is: read far, so only what is known to be this machine or its
 * network is. Read close, a public page written as an IPv6 form embedding its address
 * ([::ffff:5db8:d822] is 93.184.216.34) would count as this machine and name its loopback.
 */
function pageReach(hostname: string): Reach {
  const name = hostname.replace(/\.+$/, '');
  if (isThisMachineName(name)) return 'machine';
  if (name.startsWith('[')) return pageIpv6Reach(name);
  if (IPV4.test(name)) return pageIpv4Reach(name);
  // A single label written absolute ("ai.") skips the search domains: a top-level domain's own address.
  if (name !== hostname && !name.includes('.')) return 'public';
  return isLocalName(name) ? 'network' : 'public';
}

function pageIpv4Reach(ip: string): Reach {
  if (isLoopbackAddress(ip) || ip === '0.0.0.0') return 'machine';
  return NETWORK_IPV4.test(ip) ? 'network' : 'public'; // multicast, reserved, documentation: no page of ours
}

function pageIpv6Reach(literal: string): Reach {
  const embedded = embeddedIpv4(literal);
  if (embedded?.mapped) return pageIpv4Reach(embedded.ipv4); // Node connects to it as IPv4
  // Reached through a gateway or relay on the way: at closest that network, never this machine.
  if (embedded) return pageIpv4Reach(embedded.ipv4) === 'public' ? 'public' : 'network';
  // Unique-local fc00::/7, link-local fe80::/10, site-local fec0::/10.
  return /^\[(?:f[cd]|fe[89a-f])/.test(literal) ? 'network' : 'public';
}

const isThisMachineName = (name: string): boolean =>
  isLoopbackHost(name) || name.endsWith('.localhost') || LOOPBACK_NAMES.has(name);

/** A dotless name is resolved by /etc/hosts or a search domain: the local network's. */
const isLocalName = (name: string): boolean => /^[^.]+$/.test(name) || LOCAL_NAME.test(name);

/** This machine's name (which /etc/hosts gives its own address), where the runtime has node:os: not on edge runtimes. */
function ownHostname(): string | undefined {
  const { process } = globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } };
  try {
    const os = process?.getBuiltinModule?.('node:os') as { hostname?: () => string } | undefined;
    return os?.hostname?.().toLowerCase().replace(/\.+$/, '') || undefined;
  } catch {
    return undefined;
  }
}

/** The terms inside the gate id of `…/v1/gates/{id}/verify` (its ref is what the API checks a transfer proof against). */
function gateOf(verifyUrl: string | undefined): GateTerms | undefined {
  return readGate(gateIdOf(verifyUrl)) ?? undefined;
}

/**
 * The ref of the Crawlgate gate a payment of `offer` pays, what the API's tokens for it name as their
 * gate_id: the gate id a v2 payment echoes (the one the gate checks); for a v1 payment, which names
 * none, the gate of the `verify_url` known for it (`verifyUrl`: a pending answer's, when a resend met
 * a fresh gate), else the offer's.
 */
export function paidGateRef(offer: Offer, verifyUrl = offer.verifyUrl): string | undefined {
  const echoed = offer.v2?.accepted.extra?.gate_id;
  if (echoed !== undefined) return readGate(echoed)?.ref ?? undefined;
  return gateOf(verifyUrl)?.ref ?? offer.gateRef;
}

/** The gate id a Crawlgate `verify_url` (`…/v1/gates/{id}/verify`) posts to; undefined for any other URL. */
function gateIdOf(verifyUrl: string | undefined): string | undefined {
  if (!verifyUrl || !URL.canParse(verifyUrl)) return undefined;
  const id = /\/v1\/gates\/([^/]+)\/verify$/.exec(new URL(verifyUrl).pathname)?.[1];
  try {
    return id && decodeURIComponent(id);
  } catch {
    return undefined; // a malformed escape: not a gate
  }
}

function fromV1(r: Untrusted<PaymentRequirementsV1> | undefined, verifyUrl: string | undefined): Offer | null {
  const network = r?.network;
  const chainId = chainIdOf(network);
  if (r?.scheme !== 'exact' || typeof network !== 'string' || chainId === null || !isAmount(r.maxAmountRequired))
    return null;
  return base(1, network, chainId, r.maxAmountRequired, r.asset, r.payTo, r.maxTimeoutSeconds, r.extra, verifyUrl);
}

function fromV2(
  r: Untrusted<PaymentRequirementsV2> | undefined,
  resource: ResourceInfo,
  verifyUrl: string | undefined,
): Offer | null {
  const network = r?.network;
  const chainId = chainIdOf(network);
  if (
    (r?.scheme !== 'exact' && r?.scheme !== BATCH_SETTLEMENT_SCHEME) ||
    typeof network !== 'string' ||
    chainId === null ||
    !isAmount(r.amount)
  )
    return null;
  const offer = base(2, network, chainId, r.amount, r.asset, r.payTo, r.maxTimeoutSeconds, r.extra, verifyUrl);
  if (!offer) return null;
  // Echoed back in the payment as the site stated it, the fields above checked.
  const accepted = r as PaymentRequirementsV2;
  if (r.scheme === 'exact') return { ...offer, v2: { accepted, resource } };
  const batch = batchTerms(r.extra);
  return batch && { ...offer, scheme: BATCH_SETTLEMENT_SCHEME, batch, v2: { accepted, resource } };
}

/** x402's batch-settlement `extra`, strictly: a malformed one is no offer at all. */
function batchTerms(extra: unknown): BatchTerms | null {
  const { escrow, receiverAuthorizer, withdrawDelay, channelState, voucherState } =
    untrusted<BatchSettlementExtra>(extra) ?? {};
  if (!isAddress(escrow) || !isAddress(receiverAuthorizer) || !Number.isSafeInteger(withdrawDelay)) return null;
  if ((withdrawDelay as number) < MIN_WITHDRAW_DELAY || (withdrawDelay as number) > MAX_WITHDRAW_DELAY) return null;
  const terms: BatchTerms = { escrow, receiverAuthorizer, withdrawDelay: withdrawDelay as number };
  const state = untrusted<NonNullable<BatchSettlementExtra['channelState']>>(channelState);
  if (
    state &&
    typeof state.channelId === 'string' &&
    /^0x[0-9a-fA-F]{64}$/.test(state.channelId) &&
    isAmount(state.chargedCumulativeAmount)
  ) {
    terms.channelState = {
      channelId: state.channelId as Hex,
      chargedCumulativeAmount: BigInt(state.chargedCumulativeAmount),
    };
  }
  const voucher = untrusted<NonNullable<BatchSettlementExtra['voucherState']>>(voucherState);
  if (
    voucher &&
    isAmount(voucher.signedMaxClaimable) &&
    typeof voucher.signature === 'string' &&
    /^0x[0-9a-fA-F]{130}$/.test(voucher.signature)
  ) {
    terms.voucherState = {
      signedMaxClaimable: BigInt(voucher.signedMaxClaimable),
      signature: voucher.signature as Hex,
    };
  }
  return terms;
}

function base(
  version: 1 | 2,
  network: string,
  chainId: number,
  amount: string,
  asset: unknown,
  payTo: unknown,
  maxTimeoutSeconds: unknown,
  extra: unknown,
  verifyUrl: string | undefined,
): Offer | null {
  // The token's EIP-712 domain, named as every requirement's `extra` names it (a gate's: ExactExtra).
  const domain = untrusted<ExactExtra>(extra);
  if (!isAddress(asset) || !isAddress(payTo) || typeof domain?.name !== 'string' || typeof domain.version !== 'string')
    return null;
  // Nothing to pay is no offer: it would be signed, counted and remembered like a payment.
  if (BigInt(amount) === 0n) return null;
  // Whole seconds, at least one (0.5 floored would make an authorization valid before now), at most
  // core's MAX_AUTHORIZATION_SECONDS (1e400 reads as Infinity: a transfer's proof kept for ever).
  const timeout =
    typeof maxTimeoutSeconds === 'number' && maxTimeoutSeconds > 0
      ? Math.min(MAX_AUTHORIZATION_SECONDS, Math.ceil(maxTimeoutSeconds))
      : 60;
  return {
    scheme: 'exact',
    version,
    network,
    chainId,
    amount: BigInt(amount),
    asset,
    payTo,
    maxTimeoutSeconds: timeout,
    domain: { name: domain.name, version: domain.version },
    verifyUrl,
  };
}

/** The offers the agent pays one page at a time ("exact"), in the order it considers them. */
export function exactOffers(offers: readonly Offer[]): Offer[] {
  return offers.filter((offer) => offer.scheme === 'exact');
}

/** Named x402 networks through core's registry; any CAIP-2 `eip155:<id>` directly. */
export function chainIdOf(network: unknown): number | null {
  if (typeof network !== 'string') return null;
  // A chain id past 15 digits is no safe integer: no chain the agent could pay on.
  const caip = /^eip155:(\d{1,15})$/.exec(network);
  if (caip) return Number(caip[1]);
  return findNetworkByX402(network)?.chainId ?? null;
}

/** In lower case or as its EIP-55 checksum, as viem signs it: any other spelling may be a typo, and is no offer. */
const isAddress = (value: unknown): value is `0x${string}` => isEvmAddress(value) && holdsEip55Checksum(value);
const isAmount = (value: unknown): value is string => typeof value === 'string' && /^\d{1,30}$/.test(value);

/**
 * The offer a page of `url` is paid ahead with (batchSettlement.payAhead): `charged`, the last
 * voucher offer its origin's gate charged, naming no gate, for this URL. x402 v2 lets a payment
 * name no gate: the middleware pays it with a gate it mints for the path the request reaches, at
 * that path's price, and corrects any other total. No verify_url or gate: nothing to ask of a gate
 * this payment never named, so a lost answer is settled by sending the same payment again.
 */
export function offerAhead(charged: Offer, url: URL): Offer {
  const accepted = charged.v2!.accepted;
  // A corrective 402's view of the channel is that moment's, not this payment's.
  const { gate_id: _named, channelState: _said, voucherState: _held, ...extra } = accepted.extra ?? {};
  const { channelState: _state, voucherState: _voucher, ...terms } = charged.batch!;
  return {
    ...charged,
    verifyUrl: undefined,
    gateRef: undefined,
    gateExp: undefined,
    batch: terms,
    v2: { accepted: { ...accepted, extra }, resource: { url: url.href } },
  };
}
