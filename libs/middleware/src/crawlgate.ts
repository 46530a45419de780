/*
 * The gate itself, framework-free: one request in, one Decision out. The order of the checks is
 * DESIGN.md's "The middleware's flow":
 *
 *   /.well-known/pay.json → the site's offer; always-free paths (/robots.txt, ...) → pass;
 *   a valid access token for this path → pass, with no network call; people and allowed bots →
 *   pass; blocked bots → 403; a sign-in-with-x proof the API accepts, whose paid token opens this
 *   path → pass (siwx.ts); an x402 payment for a gate of this path → settle through the API,
 *   then pass with the settlement headers; anything else → 402 with a gate minted here.
 *
 * The site's pricing and terms load at start-up and refresh in the background, so a 402 costs no
 * API call. The money path fails closed: for a visitor that must pay, only a token for this exact
 * path or a payment the API confirmed for a gate of this exact path serves the page. Every other
 * answer or failure of the API is 402 (a fresh gate, the settlement header saying why) or 503 with
 * Retry-After while a settlement may be in flight. failMode decides only while the pricing has
 * never loaded.
 */

import { requestForCallback } from './adapters/framework-gate-request';
import {
  BOT_CATALOGUE_ENTRIES,
  buildGateOffer,
  fitsAccessToken,
  MAX_TOKEN_PATH_BYTES,
  MAX_URL_LENGTH,
  newGateRef,
  newTargetBoundGateRef,
  gateRefBindsTarget,
  paymentRequiredHeader,
  readGate,
  signGate,
  isPlainRoute,
  priceRoute,
  checkStaticFiles,
  literalRedactor,
  type StaticFiles,
  rawPath,
  routeOf,
  verifyAccessToken,
  ACCESS_TOKEN_CLOCK_SKEW_SECONDS,
  verifyGate,
  stricterAction,
  isUnnamedCrawler,
  X402_REASONS,
  parsePriceUsd,
  CRAWLER_PRICE_HEADERS,
  UNLISTED_AGENT,
  type RoutingOptions,
  type CrawlerAction,
  type GateOffer,
  type ChannelCorrection,
  type PaidGate,
  type PaymentTerms,
  type RefundedChannel,
  type SettleResponse,
  type Route,
  type SiteOffer,
} from '@crawlgate/core';
import { checkApiUrl, createApiClient, CrawlgateApiError, type ApiClient, type VerifyAnswer } from './api-client';
import { botPolicyProblems, isAlwaysFreeRoute, type BotAction, type BotPolicy } from './bots';
import { identifyVisitor, type AddressChecker } from './bots/identify';
import { notCharging, PASS, passAfterPayment, respondJson, type Decision } from './decision';
import { liveSecrets, type UsableSecrets } from './live-secrets';
import { operatorOf, type CrawlerSighting } from './crawler-counts';
import { createGateCounter } from './gate-counts';
import { createLicensing, type LicensingOptions } from './license';
import { buildPayJson } from './pay-json';
import { isPlainPersonRequest } from './plain-person';
import { crawlerPrice, headerValue, lowerCaseHeaders, presentedToken, type HeaderRecord } from './request-headers';
import { loadSiteTerms, MAX_TERMS_AGE_MS, type SiteTerms } from './site-terms';
import { policyBeforeStored } from './stored-bot-policy';
import { createSiwxGate } from './siwx';
import { inFlightLimit } from './in-flight-limit';
import {
  catalogueIpSources,
  catalogueReverseDns,
  createCrawlerIps,
  createReverseDns,
  isInternalAddress,
  parseIp,
  withoutPort,
  type CrawlerIpsOptions,
  type ReverseDnsOptions,
} from './crawler-ips';
import { claimsSignature, createWebBotAuth, type SignatureCheck, type WebBotAuthOptions } from './web-bot-auth';
import { hasPaymentHeader, presentedPayment, settlementHeader, type PresentedPayment } from './x402-headers';

export type { RoutingOptions };

export interface CrawlgateRequest {
  method: string;
  /** Path and query ("/post/1?x=y") or an absolute URL, as the request wrote it. */
  url: string;
  /**
   * The URL the router routes by, when a rewrite before the gate made it another (an i18n prefix
   * stripped, Fastify's rewriteUrl): priced too, the highest price wins, and no token opens such
   * a request (it is paid each time, as a path with two readings is).
   */
  routedUrl?: string;
  headers: HeaderRecord;
  ip?: string;
  /** What the router serving this request treats as the same route, when the adapter knows (overrides options.routing). */
  routing?: RoutingOptions;
}

export interface CrawlgateLogger {
  warn(message: string): void;
}

export interface CrawlgateOptions {
  /** Where the Crawlgate API is, e.g. "https://api.crawlgate.dev". */
  apiUrl: string;
  siteId: string;
  /** The site's `st_…` token: reads the site's terms, settles payments. Never logged. */
  siteToken: string;
  /**
   * The site's access-token secret; several during a rotation, the new one first. Each is used only
   * while the API lists it as usable (live-secrets.ts); until the API has listed them, the first alone.
   */
  secret: string | readonly string[];
  /**
   * Which bots pay, pass or are blocked; the catalogue's defaults otherwise. The policy stored in
   * the API (dashboard, CLI, SDK) loads with the pricing and applies too; where both set the same
   * category or bot, this one wins (stored-bot-policy.ts).
   */
  policy?: BotPolicy;
  /**
   * What to do while the site's pricing has never loaded (the API down at start-up), for visitors
   * that may have to pay: 'closed' (default) answers 503, 'open' serves. People are served either
   * way. Once it has loaded, an API failure never serves a visitor that must pay.
   */
  failMode?: 'open' | 'closed';
  /** Per API call; default 3000 ms. */
  timeoutMs?: number;
  /** For verifying a payment, which waits for the chain; default the API's settlement timeout + 5 s. */
  verifyTimeoutMs?: number;
  /**
   * Payment and sign-in calls to the API running at once; default 256. A request that would start
   * one more is answered 503 with Retry-After at once, not sent and not charged: a crawler inventing
   * payments cannot pile up calls (a socket each) while the API is slow. The slot is given back at
   * the call's deadline: a `fetch` of your own must end its request when its signal aborts.
   */
  maxApiCallsInFlight?: number;
  /** Let apiUrl be plain http off loopback (a network you trust): the site token and payments cross it in clear. Default false. */
  allowPlainHttpApi?: boolean;
  /** How often the pricing is refreshed; default 15 000 ms, at most 30 000. */
  refreshMs?: number;
  /** How often the 402s answered are reported for the site's stats; default and minimum 10 000 ms. */
  reportIntervalMs?: number;
  /** What the router treats as the same route; adapters fill it in where they can read it. Unknown is priced leniently. */
  routing?: RoutingOptions;
  /**
   * How the static file servers behind the gate map URLs to files, so that a file priced by one URL
   * is priced under each it is served by: `index` (default ["index.html"]: "dir/" and "dir" serve
   * "dir/index.html"), `extensions` (default none; set it to express.static's or @fastify/static's
   * `extensions`: "report" serves "report.html"), `precompressed` (default br, gz, deflate, zst:
   * "report.html.gz" is priced as "report.html"). false: no static files.
   */
  staticFiles?: StaticFiles | false;
  /** Your own bot detection: true = a bot that pays, false = never gated, undefined = use the catalogue. */
  isBot?: (request: CrawlgateRequest) => boolean | undefined;
  /** Default console. Messages never contain tokens, payments or secrets. */
  logger?: CrawlgateLogger;
  /** The fetch used for API calls; default the global one. */
  fetch?: typeof fetch;
  /** The RSL license document, usage preferences, and /robots.txt when the app has none (license.ts). */
  licensing?: LicensingOptions;
  /**
   * Web Bot Auth verification of signed requests (web-bot-auth/): the site's other hosts (aliases of
   * its domain), key directory timeout, size and cache, clock skew, signature lifetime, replay
   * memory. Requests without signature headers skip it.
   */
  webBotAuth?: WebBotAuthOptions;
  /**
   * Verification of crawlers by the IP ranges their operators publish (crawler-ips/): a request
   * naming Googlebot, bingbot, Applebot, GPTBot… from outside its operator's ranges is unverified,
   * and never allowed; so is one naming YandexBot, Baiduspider… whose address's host name is not
   * its operator's (reverseDns). On by default; `false` trusts User-Agents again. `clientIp` says where the
   * visitor's address is (default: the adapter's, which honours the framework's proxy settings).
   */
  crawlerIps?:
    | false
    | (CrawlerIpsOptions & {
        clientIp?: (request: CrawlgateRequest) => string | undefined;
        /**
         * Forward-confirmed reverse DNS, for the crawlers whose operators document host names
         * instead of ranges (the catalogue's `reverseDns`: YandexBot, Baiduspider, msnbot…). On by
         * default: on a runtime with no DNS resolver it verifies none of them, so they are charged.
         * `false` takes them at their User-Agent again.
         */
        reverseDns?: false | ReverseDnsOptions;
      });
}

export interface Crawlgate {
  handle(request: CrawlgateRequest): Promise<Decision>;
  /**
   * handle's decision, given at once when it needs no I/O (the terms loaded, no signature to check,
   * no payment to verify): a person's request, a valid token, an unpaid bot's 402. A promise otherwise.
   * For adapters whose framework takes a callback: no turn of the event loop per request.
   */
  handleNow(request: CrawlgateRequest): Decision | Promise<Decision>;
  /** Resolves once the first load of the site's terms has succeeded or failed. */
  ready(): Promise<void>;
  /** Stops the background refresh and sends the gate counts not yet reported. */
  close(): Promise<void>;
}

type Signing = NonNullable<UsableSecrets['signing']>;

/** A gate minted for one request: its offer, and the PAYMENT-REQUIRED header that carries it. */
interface MintedGate {
  offer: GateOffer;
  paymentRequired: string;
  /** The secret it was signed with: a corrective 402 for it is signed with the same. */
  signing: Signing;
}

export const PAY_JSON_PATH = '/.well-known/pay.json';
const PAY_JSON_CACHE_SECONDS = 60;
/** Paid answers' tokens remembered (by MAC), to count a payment sent again as a re-read: about 300 KB at the bound. */
const MAX_PAID_TOKENS_REMEMBERED = 4096;
const DEFAULT_REFRESH_MS = 15_000;
const MAX_REFRESH_MS = 30_000;
const MIN_REPORT_INTERVAL_MS = 10_000;
/** verify waits this much longer than the API waits for its settlement, so the API answers first. */
const VERIFY_MARGIN_MS = 5_000;
const DEFAULT_MAX_API_CALLS_IN_FLIGHT = 256;
const BUSY_WARNING_INTERVAL_MS = 60_000;
/** The longest Retry-After passed on from the API's "took nothing" 503: the payer comes back within it. */
const MAX_NOT_CHARGED_RETRY_AFTER_SECONDS = 60;

type Visitor =
  | { kind: 'person' }
  | {
      kind: 'bot';
      name: string;
      category: string;
      action: BotAction;
      operator: string | null;
      verified: boolean;
      awaitingAddress?: true;
    };

/**
 * What decide() learned of a request, for the crawler counts: the visitor once classified, or what
 * classifies a token's bearer when it is counted (a token's page needs no classification to pass).
 * Plain fields, no closure: a closure in decideFor made every call of it allocate a context holding
 * the request, which the person path's profile showed as a fifth of its garbage collection.
 */
interface Seen {
  outcome?: 'token' | 'passed' | 'allowed' | 'blocked' | 'charge';
  visitor?: Visitor;
  bearer?: { request: CrawlgateRequest; headers: HeaderRecord; token: string; signature: SignatureCheck | undefined };
  path?: string;
  micros?: bigint;
}

/** Visible ASCII: what a site token is, and all an HTTP header value carries without a fuss. */
const HEADER_TOKEN = /^[\x21-\x7e]+$/;

export function createCrawlgate(options: CrawlgateOptions): Crawlgate {
  for (const name of ['apiUrl', 'siteId', 'siteToken'] as const) {
    if (typeof options[name] !== 'string' || options[name] === '')
      throw new TypeError(`createCrawlgate: ${name} is required`);
  }
  checkApiUrl(options.apiUrl, options.allowPlainHttpApi === true);
  // Quoted by fetch's own error, and so by a warning, were the gate to send it.
  if (!HEADER_TOKEN.test(options.siteToken))
    throw new TypeError(
      'createCrawlgate: siteToken holds a character no HTTP header carries (a line break, a space, a NUL?); check how it is set',
    );
  const secrets = typeof options.secret === 'string' ? [options.secret] : [...(options.secret ?? [])];
  if (secrets.length === 0 || secrets.some((s) => typeof s !== 'string' || s === '')) {
    throw new TypeError('createCrawlgate: secret must be a non-empty string or a list of them');
  }
  const maxApiCalls = options.maxApiCallsInFlight ?? DEFAULT_MAX_API_CALLS_IN_FLIGHT;
  if (!Number.isSafeInteger(maxApiCalls) || maxApiCalls < 1)
    throw new TypeError('createCrawlgate: maxApiCallsInFlight must be a whole number of at least 1');
  // Closed unless the publisher chose otherwise: an API out of reach must not give pages away.
  const failMode = options.failMode ?? 'closed';
  const routing = options.routing ?? {};
  const staticFiles = checkStaticFiles(
    options.staticFiles === false ? { index: [], precompressed: [] } : (options.staticFiles ?? {}),
  );
  const logger = options.logger ?? console;
  // Whatever the API, a proxy or fetch echoes (a body quoting the token, an error quoting a header):
  // no warning carries the site token or a secret.
  const redact = literalRedactor([options.siteToken, ...secrets]);
  const warn = (message: string) => logger.warn(`crawlgate: ${redact(message)}`);
  const api: ApiClient = createApiClient({
    apiUrl: options.apiUrl,
    siteToken: options.siteToken,
    timeoutMs: options.timeoutMs ?? 3000,
    fetch: options.fetch,
  });
  const site = loadSiteTerms({
    api,
    refreshMs: Math.min(options.refreshMs ?? DEFAULT_REFRESH_MS, MAX_REFRESH_MS),
    policy: options.policy,
    siteId: options.siteId,
    onError: warn,
  });
  const live = liveSecrets(secrets, warn);
  /** The configured secrets that verify now (live-secrets.ts). */
  // Lapsed terms may not know of a secret revoked since, nor may the configuration before any terms
  // loaded (its first secret may be one revoked since): nothing verifies until terms load.
  const verifyingSecrets = () => {
    const terms = site.current();
    return !terms || site.lapsed() ? [] : live(terms.offer).verifying;
  };
  const apiCalls = inFlightLimit(maxApiCalls);
  /** When a payment was last answered 503 for want of a slot: said once a minute, not once per request of a flood. */
  let busySaidAt = -Infinity;
  const siwx = createSiwxGate({
    // Past the limit the sign-in is not checked: 503, as for an API that cannot answer it.
    api: {
      siwx: (request) =>
        apiCalls.run(() => api.siwx(request)) ??
        Promise.reject(new CrawlgateApiError('too many API calls in flight; the sign-in was not sent')),
    },
    siteId: options.siteId,
    tokenOpens,
    warn,
  });
  const licensing = createLicensing(options.licensing);
  // A signature verifies only when made for one of the site's own hosts: its domain, as the terms give it, and webBotAuth.hosts.
  const webBotAuth = createWebBotAuth(options.webBotAuth, () => site.current()?.offer.domain, warn);
  const crawlerIps = crawlerIpsOf(options.crawlerIps, warn);
  /** The address checks as they stand, starting nothing: for counting a visitor already let through. */
  const countingAddresses: AddressChecker | undefined = crawlerIps && {
    check: (crawler, address) => crawlerIps.check(crawler, address, false),
  };
  const gateCounts = createGateCounter({
    api,
    intervalMs: Math.max(options.reportIntervalMs ?? MIN_REPORT_INTERVAL_MS, MIN_REPORT_INTERVAL_MS),
    onError: warn,
  });

  // A typo in the policy would otherwise charge or free bots silently, request after request.
  for (const problem of botPolicyProblems(options.policy)) warn(problem);
  const policyBeforeLoad = policyBeforeStored(options.policy);

  /** `path` is route.path, already requestPath()'s spelling: not spelled again. `secrets`: those that verify now. */
  function tokenOpens(token: string, path: string, secrets: readonly string[] = verifyingSecrets()): boolean {
    return tokenCheck(token, path, secrets).valid;
  }

  function tokenCheck(token: string, path: string, secrets: readonly string[]) {
    return verifyAccessToken(token, { secret: secrets, siteId: options.siteId, path });
  }

  /** Read for people too, so it never throws: an address the option cannot give is none, which verifies no crawler. */
  function clientIp(request: CrawlgateRequest): string | undefined {
    const clientIpOf = options.crawlerIps ? options.crawlerIps.clientIp : undefined;
    // A trusted proxy may write the client's port into X-Forwarded-For, and the framework keeps it.
    if (!clientIpOf) return request.ip === undefined ? undefined : withoutPort(request.ip);
    try {
      const address: unknown = clientIpOf(requestForCallback(request));
      return typeof address === 'string' ? withoutPort(address) : undefined;
    } catch {
      return undefined;
    }
  }

  /** The visitor's address as the API's sign-in limit counts it: clientIp()'s when it is one, else the socket's. */
  function signInAddress(request: CrawlgateRequest): string | undefined {
    const address = clientIp(request);
    return address !== undefined && parseIp(address) !== null ? address : request.ip;
  }

  /** `headers`: request.headers with lower-case names (lowerCaseHeaders); isBot sees the request as it came (requestForCallback). */
  function classify(
    request: CrawlgateRequest,
    headers: HeaderRecord,
    token: string | undefined,
    signature: SignatureCheck | undefined,
    addresses: AddressChecker | undefined = crawlerIps,
  ): Visitor {
    const verdict = options.isBot?.(requestForCallback(request));
    if (verdict === false) return { kind: 'person' };
    // The stored policy under the code's, once the terms loaded (stored-bot-policy.ts); until then
    // policyBeforeStored: every category charged at least, as the stored policy may charge what the
    // defaults or the code's categories allow.
    const terms = site.current();
    const policy = terms ? terms.botPolicy.effective : policyBeforeLoad;
    // A verified Web Bot Auth signature identifies the visitor whatever its User-Agent says (bots/identify.ts).
    const identify = (applied: typeof policy) =>
      identifyVisitor(
        headerValue(headers, 'user-agent'),
        applied,
        signature,
        addresses,
        addresses && clientIp(request),
      );
    let visitor = identify(policy);
    // Terms that lapsed are not trusted, nor forgotten: a bot their stored policy charged or blocked stays so.
    const lapsed = terms ? undefined : site.lastLoaded();
    if (visitor.kind === 'bot' && lapsed) {
      const before = identify(lapsed.botPolicy.effective);
      if (before.kind === 'bot') visitor = { ...visitor, action: stricterAction(visitor.action, before.action) };
    }
    if (visitor.kind === 'bot') return visitor;
    // Whoever presents a payment or a token is an agent, whatever its user agent says.
    const agent = verdict === true || token !== undefined || hasPaymentHeader(headers);
    return agent
      ? {
          kind: 'bot',
          name: UNLISTED_AGENT,
          category: 'automation',
          action: 'charge',
          operator: null,
          verified: false,
        }
      : { kind: 'person' };
  }

  /**
   * A gate for this route at this price, signed here with `signing`'s secret, and the 402 that offers it.
   * `correction`: x402's corrective 402 for a batch-settlement voucher whose running total is not the API's.
   */
  function mintGate(
    terms: SiteTerms & { offer: { pay_to: string } },
    signing: Signing,
    route: Route,
    request: CrawlgateRequest,
    micros: bigint,
    correction?: ChannelCorrection,
  ): MintedGate {
    const { offer: site } = terms;
    const now = Math.floor(Date.now() / 1000);
    const gate = {
      siteId: options.siteId,
      // Where a router may read the target as another path, its gate takes a payment again on it alone (pay()).
      ref: isPlainRoute(route) ? newGateRef() : newTargetBoundGateRef(signing.secret, targetOf(request)),
      path: route.path,
      micros,
      chainId: site.chain_id,
      asset: site.asset as `0x${string}`,
      payTo: site.pay_to as `0x${string}`,
      iat: now,
      // Never payable after its secret could still sign the payment's token.
      exp: Math.min(now + site.gate_ttl_seconds, signing.payableUntil ?? Infinity),
    };
    const id = signGate(gate, signing.secret);
    const offer = buildGateOffer(id, gate, paymentTermsOf(site), {
      domain: site.domain,
      apiBaseUrl: site.api_base_url,
      pathAndQuery: resourceTarget(request.url, route),
      now,
    });
    return {
      offer,
      paymentRequired: paymentRequiredHeader(
        offer,
        site.caip2,
        siwx.challenge(site, route.path, now, signing.secret),
        correction,
      ),
      signing,
    };
  }

  function paymentRequired(gate: MintedGate, headers: Record<string, string> = {}): Decision {
    gateCounts.count();
    return respondJson(402, gate.offer, {
      'payment-required': gate.paymentRequired,
      'crawler-price': `USD ${gate.offer.price_usd}`,
      ...licensing.linkHeader(site.current()?.offer),
      ...headers,
    });
  }

  function charge(
    request: CrawlgateRequest,
    headers: HeaderRecord,
    route: Route,
    terms: SiteTerms,
    micros: bigint,
    signature: SignatureCheck | undefined,
    seen: Seen,
  ): Decision | Promise<Decision> {
    const maxPrice = crawlerPrice(headers, 'crawler-max-price');
    const exactPrice = crawlerPrice(headers, 'crawler-exact-price');
    if (maxPrice === undefined || exactPrice === undefined) {
      return crawlerError(
        400,
        'InvalidCrawlerPriceValue',
        'crawler-max-price and crawler-exact-price must read like "USD 0.01"',
      );
    }
    if (maxPrice !== null && exactPrice !== null)
      return crawlerError(400, 'ConflictingPriceHeaders', 'Send crawler-max-price or crawler-exact-price, not both');
    // Cloudflare's rule: a signed request's price header must be signed too, or anyone relaying it could change the price.
    const unsigned =
      signature && CRAWLER_PRICE_HEADERS.find((name) => headers[name] !== undefined && !signature.covered.has(name));
    if (unsigned)
      return crawlerError(
        400,
        'InvalidSignature',
        `The request is signed but ${unsigned} is not among the signed components`,
      );
    if (!hasPayTo(terms)) {
      warn('the site cannot charge yet: its publisher has no payout address; answering 503 to bots that must pay');
      return notCharging('This site cannot take payments yet; retry later', 60);
    }
    // With no secret that verifies, the tokens of payments taken here could not open pages here: none are taken.
    const { signing } = live(terms.offer);
    if (!signing)
      return notCharging(
        "This site's gate holds no access-token secret that verifies; it takes no payments until it does",
        60,
      );
    const fresh = mintGate(terms, signing, route, request, micros);

    // Cloudflare's convention: the crawler states what it will pay; we never take more (checked in pay()
    // against the price that would settle: a sign-in to a page paid before charges nothing).
    const stated = { maxPrice, exactPrice };

    if (siwx.presented(headers) && isPlainRoute(route))
      // A sign-in the API could not check is a 503, a payment the request also carries included:
      // the wallet may have paid for this page, and junk proofs can keep the API's sign-in limit
      // spent; taking the payment would charge it again. The payment is not lost: it is retried.
      return siwx
        .reaccess(headers, route.path, live(terms.offer).verifying, signInAddress(request))
        .then((signedIn) => {
          if (!signedIn) return pay(request, headers, route, terms, micros, fresh, stated);
          // A page paid before, read again: no new payment, no revenue. A sign-in the API could not check (503) is no visit's outcome.
          if (signedIn.kind === 'pass-after-payment') seen.outcome = 'token';
          return signedIn;
        });
    return pay(request, headers, route, terms, micros, fresh, stated);
  }

  /** The payment presented, if any: refused here when unreadable or named for another path, else verified by the API. */
  function pay(
    request: CrawlgateRequest,
    headers: HeaderRecord,
    route: Route,
    terms: SiteTerms,
    micros: bigint,
    fresh: MintedGate,
    stated: StatedPrices,
  ): Decision | Promise<Decision> {
    const payment = presentedPayment(headers);
    const statedError = (price: bigint) => {
      const code = statedPriceError(stated, price);
      return code ? paymentRequired(fresh, { 'crawler-error': code }) : undefined;
    };
    if (!payment) return statedError(micros) || paymentRequired(fresh);
    if (!payment.ok)
      return paymentRequired(fresh, settlementHeader(payment.via, failedSettlement(X402_REASONS.invalid_payload)));

    const named = namedGate(payment, route, micros);
    if (named.kind === 'refused')
      return paymentRequired(
        fresh,
        settlementHeader(payment.via, failedSettlement(named.reason, payment.network, payment.payer)),
      );
    // A v1 X-PAYMENT cannot name its gate: it pays the gate minted for it now, for this path. So
    // does a payment on a target a router may read as another path, unless it names the gate
    // offered on this very target (a retry, a resend): a gate paid once would otherwise be opened
    // again by the payment sent on other spellings of its path, which a router serves as other pages.
    if (named.kind === 'unnamed' || !(isPlainRoute(route) || offeredHere(named.ref, request, route)))
      return statedError(micros) || verify(request, route, terms, micros, fresh, payment, fresh.offer.id, false);
    // The gate named settles at its own price, which may be above the path's now (offered before it was
    // lowered); one offered below it is only read again (recorded_only), paid before and charged nothing now.
    if (!named.recordedOnly) {
      const refused = statedError(named.micros);
      if (refused) return refused;
    }
    return verify(request, route, terms, micros, fresh, payment, named.gateId, named.recordedOnly);
  }

  async function verify(
    request: CrawlgateRequest,
    route: Route,
    terms: SiteTerms,
    micros: bigint,
    fresh: MintedGate,
    payment: Extract<PresentedPayment, { ok: true }>,
    gateId: string,
    recordedOnly: boolean,
  ): Promise<Decision> {
    const call = apiCalls.run(() =>
      api.verify(
        gateId,
        payment.payment,
        options.verifyTimeoutMs ?? terms.offer.settlement_timeout_seconds * 1000 + VERIFY_MARGIN_MS,
        recordedOnly,
      ),
    );
    if (!call) return gateBusy();
    let answer: VerifyAnswer;
    try {
      answer = await call;
    } catch (error) {
      if (!(error instanceof CrawlgateApiError)) throw error;
      warn(`${error.message}; the page is not served`);
      // The API refused the call (4xx): nothing was settled. No answer or a 5xx: a settlement may be in flight.
      // (Its 429 is an answer, 'throttled': this payment may be settling from an earlier send.)
      if (error.status !== undefined && error.status < 500)
        return paymentRequired(
          fresh,
          settlementHeader(payment.via, failedSettlement(X402_REASONS.unexpected_settle_error, payment.network)),
        );
      return settlementPending(gateId, terms, route, 30);
    }
    if (answer.kind === 'rejected' && answer.correction && hasPayTo(terms)) {
      // x402's corrective 402 carries no PAYMENT-RESPONSE: the client reads the channel state from PAYMENT-REQUIRED, then pays again.
      return paymentRequired(mintGate(terms, fresh.signing, route, request, micros, answer.correction));
    }
    return settled(answer, fresh, gateId, payment, route, terms);
  }

  function settled(
    answer: VerifyAnswer,
    fresh: MintedGate,
    gateId: string,
    payment: Extract<PresentedPayment, { ok: true }>,
    route: Route,
    terms: SiteTerms,
  ): Decision {
    const { via, network, payer: from } = payment;
    switch (answer.kind) {
      case 'paid': {
        const { paid } = answer;
        // Served only with a token that opens this very path: whatever the API said, a payment for another path never serves.
        // Checked with the secrets of the terms it was taken under, which may have lapsed while it settled.
        const check = tokenCheck(paid.access_token, route.path, live(terms.offer).verifying);
        if (!check.valid) {
          warn(
            check.reason === 'expired'
              ? `the API confirmed a payment whose token for ${route.path} has expired (the payment sent again after its token's life, or this server's clock ahead of the API's by more than that life); the page is not served`
              : check.reason === 'not_yet_valid'
                ? `the API confirmed a payment whose token for ${route.path} was issued ahead of this server's clock by more than ${ACCESS_TOKEN_CLOCK_SKEW_SECONDS} s (set this server's clock right: no token opens a page until it is); the page is not served`
                : `the API confirmed a payment whose token does not open ${route.path} with the configured secret (check the secret option); the page is not served`,
          );
          // The money moved: a 402 would have an x402 client pay again. The same payment sent again
          // is answered from the API's record, by a secret the gate may have loaded by then.
          return settlementPending(gateId, terms, route, 30);
        }
        // On a target a router may read as another path, only a payment through the gate this
        // request named serves (pay() took it only as offered on this very target). The API answers
        // a voucher again through any gate of the page it paid (its resend names none): paid on one
        // spelling, it would open every odd spelling of that path, each of which a router may serve
        // as another page. Its money moved for that other gate. (No secret is read here: terms that
        // lapsed while a payment settled still let its own gate's answer serve.)
        if (!isPlainRoute(route) && check.payload.gate_id !== readGate(gateId)?.ref)
          return paymentRequired(
            fresh,
            settlementHeader(via, failedSettlement(X402_REASONS.duplicate_settlement, network, from)),
          );
        const settlement: SettleResponse = {
          success: true,
          transaction: paid.tx_hash,
          network,
          payer: paid.payer,
          ...voucherSettlement(paid),
        };
        return passAfterPayment({
          ...settlementHeader(via, settlement),
          'crawler-charged': `USD ${paid.price_usd}`,
          'x-crawlgate-token': paid.access_token,
        });
      }
      case 'refunded':
        // Only a refund request can be refunded; said of a payment, the answer is not one the gate acts on.
        if ((payment.payment as { payload?: { type?: unknown } }).payload?.type !== 'refund') {
          warn('the API answered a payment with a refund; the page is not served');
          return paymentRequired(
            fresh,
            settlementHeader(via, failedSettlement(X402_REASONS.unexpected_settle_error, network, from)),
          );
        }
        return refundAnswer(answer.refunded, payment);
      case 'not-charged':
        // The API took nothing (a payer's settlements at their limit, say): the same payment again later.
        return notCharging(answer.detail, Math.min(answer.retryAfterSeconds, MAX_NOT_CHARGED_RETRY_AFTER_SECONDS));
      case 'throttled':
        // The API's rate limit (per gate: a resend of a pending payment shares it with the payer's
        // polls of verify_url) took nothing, but this very payment may be settling from an earlier
        // send: as gateBusy(), 503 and no settlement header, never a 402 that has the client pay again.
        warn(
          `the API rate-limited a payment's verification (HTTP 429); answered 503 with Retry-After, nothing charged, the page not served`,
        );
        return notCharging(
          'Too many requests for this payment right now; it was not checked now and nothing was charged for this request; retry the same payment later',
          Math.min(answer.retryAfterSeconds, MAX_NOT_CHARGED_RETRY_AFTER_SECONDS),
        );
      case 'pending':
        // Not 402: the payment is on its way, and a 402 would make the client sign a second one.
        return settlementPending(gateId, terms, route, answer.retryAfterSeconds);
      case 'rejected':
        return paymentRequired(fresh, settlementHeader(via, failedSettlement(answer.reason, network, from)));
      case 'conflict':
        return paymentRequired(
          fresh,
          settlementHeader(via, failedSettlement(X402_REASONS.duplicate_settlement, network, from)),
        );
      case 'gone':
        // The gate expired unpaid: nothing was settled (not a duplicate, which a payer keeps in doubt).
        return paymentRequired(
          fresh,
          settlementHeader(via, failedSettlement(X402_REASONS.payment_expired, network, from)),
        );
    }
  }

  /**
   * 503 for a payment not sent to the API (too many calls in flight). No settlement header: this
   * very payment may have been sent before and be settling (a pending answer, resent into a full
   * queue), and a payer told it failed would forget it and pay again.
   */
  function gateBusy(): Decision {
    if (Date.now() - busySaidAt >= BUSY_WARNING_INTERVAL_MS) {
      busySaidAt = Date.now();
      warn(`${maxApiCalls} API calls in flight (maxApiCallsInFlight): payments past them are answered 503, not sent`);
    }
    return notCharging(
      'The payment gate is busy; the payment was not sent now and nothing was charged for it; retry later',
      5,
    );
  }

  /** 503 naming the gate: the payer (only it has seen this answer) gets its token at verify_url with the same proof. */
  function settlementPending(gateId: string, terms: SiteTerms, route: Route, retryAfterSeconds: number): Decision {
    // No token opens a target a router may read as another path: the payment sent again there is the way in.
    const body = isPlainRoute(route)
      ? {
          detail:
            'Payment sent to the chain, not confirmed yet. Retry with the same payment (x402 v2), or POST it to verify_url for the token; it is never charged twice.',
          gate_id: gateId,
          verify_url: `${terms.offer.api_base_url}/v1/gates/${gateId}/verify`,
        }
      : {
          detail:
            'Payment sent to the chain, not confirmed yet. Retry this URL with the same payment (x402 v2); it is never charged twice.',
          gate_id: gateId,
        };
    return respondJson(503, body, { 'retry-after': String(retryAfterSeconds) });
  }

  /**
   * The gate a v2 payment names, if it is one of ours for this path. `micros`: what this route costs
   * now. A gate offered for less (before the price rose) may hold a payment made then, which the API
   * answers for (`recordedOnly`: an authorization recorded, a voucher taken, as a payer whose answer
   * was lost sends it again); a new one is never taken at the old price.
   */
  function namedGate(
    payment: Extract<PresentedPayment, { ok: true }>,
    route: Route,
    micros: bigint,
  ):
    | { kind: 'named'; gateId: string; ref: string; micros: bigint; recordedOnly: boolean }
    | { kind: 'unnamed' }
    | { kind: 'refused'; reason: string } {
    const accepted = (payment.payment as { accepted?: { extra?: { gate_id?: unknown } } }).accepted;
    const gateId = accepted?.extra?.gate_id;
    if (gateId === undefined) return { kind: 'unnamed' };
    if (typeof gateId !== 'string') return { kind: 'refused', reason: X402_REASONS.invalid_payload };
    const check = verifyGate(gateId, { secret: verifyingSecrets(), siteId: options.siteId });
    // An expired gate may still hold a settled payment: the API answers for it. (verifyGate
    // checks the MAC and the site before the expiry, so an expired gate's terms are ours.)
    if (!check.valid && check.reason !== 'expired') return { kind: 'refused', reason: X402_REASONS.invalid_payload };
    const gate = check.valid ? check.gate : readGate(gateId);
    if (gate?.path !== route.path) return { kind: 'refused', reason: X402_REASONS.invalid_payload };
    return { kind: 'named', gateId, ref: gate.ref, micros: gate.micros, recordedOnly: gate.micros < micros };
  }

  /** Whether a gate named on a target a router may read as another path was offered on this very one. */
  function offeredHere(ref: string, request: CrawlgateRequest, route: Route): boolean {
    return gateRefBindsTarget(ref, verifyingSecrets(), targetOf(request)) || writtenAsItsPath(request, route);
  }

  function notLoaded(): Decision {
    const unavailable = () => notCharging('The payment gate is unavailable; retry later', 30);
    // failMode is for a start with the API out of reach; terms that lapsed since were the site's, and
    // may be wrong now; an API answering for another site is within reach, and the set-up is wrong.
    const otherSite = site.answeredForSite();
    if (otherSite !== undefined) {
      warn(
        `the API answers for site ${otherSite}, not ${options.siteId}: answering 503 until siteToken is this site's`,
      );
      return unavailable();
    }
    // Terms ever loaded are never "not loaded": a decision that read them lapsed, then waited while
    // they loaded again, would otherwise read as a start the API never answered, which open serves.
    if (site.lapsed() || site.lastLoaded() !== undefined) {
      warn(`the site's terms have not been refreshed for ${MAX_TERMS_AGE_MS / 60_000} minutes: answering 503`);
      return unavailable();
    }
    warn(
      `the site's pricing has never loaded; failMode ${failMode}: ${failMode === 'open' ? 'serving the request' : 'answering 503'}`,
    );
    return failMode === 'open' ? PASS : unavailable();
  }

  /** Waits only for what needs I/O (the first load of the terms, a key directory, the API): a person's request waits for nothing. */
  function decide(request: CrawlgateRequest, seen: Seen): Decision | Promise<Decision> {
    if (!site.firstLoadEnded()) return site.ready().then(() => decideLoaded(request, seen));
    return decideLoaded(request, seen);
  }

  function decideLoaded(request: CrawlgateRequest, seen: Seen): Decision | Promise<Decision> {
    const terms = site.current();
    const route = routeOf(request);
    if (route.path === PAY_JSON_PATH && (request.method === 'GET' || request.method === 'HEAD')) {
      if (!terms) return notLoaded();
      return respondJson(200, buildPayJson(terms.offer, licensing.path), {
        'cache-control': `public, max-age=${PAY_JSON_CACHE_SECONDS}`,
      });
    }
    // The license document (and robots.txt if asked): the gate's own answers, never the app's, on route.path alone.
    const licensed = licensing.answer(request.method, route.path, terms?.offer);
    if (licensed) return licensed;
    if (isAlwaysFreeRoute(route)) return PASS;

    const headers = lowerCaseHeaders(request.headers);
    // Only a request that claims a signature waits for its check (a key directory fetch at most, with a timeout).
    if (claimsSignature(headers))
      return webBotAuth
        .check(request, headers)
        .then((signature) => decideFor(request, seen, site.current(), route, headers, signature));
    return decideFor(request, seen, terms, route, headers, undefined);
  }

  function decideFor(
    request: CrawlgateRequest,
    seen: Seen,
    terms: SiteTerms | undefined,
    route: Route,
    headers: HeaderRecord,
    signature: SignatureCheck | undefined,
    addressWaited = false,
  ): Decision | Promise<Decision> {
    const token = presentedToken(headers);
    seen.path = route.path;
    // A token opens one path: never a target that a router may read as another (isPlainRoute), and
    // never to a crawler the policy blocks (a block applies at the next refresh, not once the tokens
    // it bought before expire). Classified starting no lookup, as for counting it.
    if (token !== undefined && isPlainRoute(route) && tokenOpens(token, route.path)) {
      const holder = classify(request, headers, token, signature, countingAddresses);
      if (holder.kind !== 'bot' || holder.action !== 'block') {
        seen.outcome = 'token';
        seen.visitor = holder;
        seen.bearer = { request, headers, token, signature };
        return PASS;
      }
    }

    const visitor = classify(request, headers, token, signature);
    // Its operator's ranges are on their way and may let it through: wait for them (a timeout at most), once.
    if (visitor.kind === 'bot' && visitor.awaitingAddress && crawlerIps && !addressWaited)
      return crawlerIps
        .loaded(visitor.name, clientIp(request))
        .then(() => decideFor(request, seen, site.current(), route, headers, signature, true));
    seen.visitor = visitor;
    if (visitor.kind === 'person' || visitor.action === 'allow') {
      seen.outcome = visitor.kind === 'person' ? 'passed' : 'allowed';
      return PASS;
    }
    if (visitor.action === 'block') {
      seen.outcome = 'blocked';
      return crawlerError(403, 'CrawlerForbidden', `${visitor.name} may not crawl this site`);
    }
    if (!terms) return notLoaded();
    // A path no access token could carry is never sold (a payment for it could never be served), nor
    // priced: a lookup reads the path once for each wildcard rule it tries, so a path of any length
    // would cost the server in proportion, ahead of every visitor.
    if (!fitsAccessToken(route.path))
      return respondJson(414, { detail: `Path longer than ${MAX_TOKEN_PATH_BYTES} bytes (UTF-8, as JSON)` });
    const micros = priceRoute(terms.prices, route, request.routing ?? routing, staticFiles);
    Object.assign(seen, micros === 0n ? { outcome: 'passed' } : { outcome: 'charge', micros });
    if (micros === 0n) return PASS;
    return charge(request, headers, route, terms, micros, signature, seen);
  }

  /** Counts what the gate did with a classified visitor (crawler-counts.ts); a charge is counted by its answer. */
  function countVisitor(seen: Seen, decision: Decision): void {
    if (!seen.outcome || !(seen.visitor || seen.bearer)) return;
    let action: CrawlerAction;
    if (seen.outcome !== 'charge') action = seen.outcome;
    else if (decision.kind === 'pass-after-payment')
      action = firstServedWith(decision.headers['x-crawlgate-token']) ? 'paid' : 'token';
    else if (decision.kind === 'respond' && decision.status === 402) action = 'charged';
    else return; // a bad price header, a pending settlement, a site that cannot charge: not a visit's outcome
    const bearer = seen.bearer;
    // A token holder is classified only to be counted: no lookup is started for it (reverse DNS).
    const visitor =
      seen.visitor ?? classify(bearer!.request, bearer!.headers, bearer!.token, bearer!.signature, countingAddresses);
    const bot = visitor.kind === 'bot';
    gateCounts.countCrawler({
      crawler: bot ? visitor.name : 'person',
      category: bot ? visitor.category : 'person',
      // A group (every agent it cannot name) has no one operator: the counts merge them all.
      operator: bot && !isUnnamedCrawler(visitor.name) ? (visitor.operator ?? operatorOf(visitor.name)) : null,
      action,
      path: bot ? (seen.path ?? null) : null,
      revenueMicros: action === 'paid' ? (chargedMicros(decision) ?? seen.micros ?? 0n) : 0n,
      verified: bot && visitor.verified,
    });
  }

  /**
   * Whether a paid answer's token is served here for the first time: a settled payment sent again
   * gets its token again, a re-read of a page paid once (counted without revenue). Bounded, the least
   * recently served forgotten first (in the Set's order); one forgotten and sent again is counted paid
   * once more, never money. Per process: each server of a site counts a payment sent to it paid once.
   */
  const paidTokens = new Set<string>();
  function firstServedWith(token = ''): boolean {
    // By its MAC: as unique as the token, and a fixed 43 characters however long its path.
    const mac = token.slice(token.lastIndexOf('.') + 1);
    const known = paidTokens.delete(mac);
    if (!known && paidTokens.size >= MAX_PAID_TOKENS_REMEMBERED) paidTokens.delete(paidTokens.values().next().value!);
    paidTokens.add(mac);
    return !known;
  }

  function counted(seen: Seen, decision: Decision): Decision {
    try {
      countVisitor(seen, decision);
    } catch (error) {
      warn(`crawler counts: ${(error as Error).message}`); // counting never changes an answer
    }
    return decision;
  }

  function failed(error: unknown): Decision {
    // A bug must not serve a page that must be paid for, nor leak what went wrong.
    warn(`internal error, answering 503: ${(error as Error)?.message}`);
    return respondJson(503, { detail: 'The payment gate failed; retry later' }, { 'retry-after': '5' });
  }

  function handleNow(request: CrawlgateRequest): Decision | Promise<Decision> {
    let seen: Seen;
    let decision: Decision | Promise<Decision>;
    try {
      // Most requests are people's: a plain one is passed and counted as the full decision would (plain-person.ts).
      if (!options.isBot && site.firstLoadEnded() && isPlainPersonRequest(request, licensing.path)) {
        gateCounts.countCrawler(PERSON_PASSED);
        return PASS;
      }
      seen = {};
      decision = decide(request, seen);
    } catch (error) {
      return failed(error);
    }
    if (decision instanceof Promise) return decision.then((settled) => counted(seen, settled), failed);
    return counted(seen, decision);
  }

  return {
    handleNow,
    handle: async (request) => handleNow(request),
    ready: () => site.ready(),
    async close() {
      site.close();
      await gateCounts.close();
    },
  };
}

/** Whether a request naming a crawler comes from its operator, by its address; and a wait for the answer. */
interface AddressVerifier extends AddressChecker {
  /** Settles when what `check` was loading for this crawler and address has loaded or failed; never rejects. */
  loaded(crawler: string, address: string | undefined): Promise<void>;
}

/**
 * The crawler address checks, unless turned off: the operators' published ranges, else
 * forward-confirmed reverse DNS for the crawlers documented by host name. It says once when a
 * crawler's claim comes from a private or loopback address, the mark of a proxy the framework was
 * not told to trust.
 */
function crawlerIpsOf(
  options: CrawlgateOptions['crawlerIps'],
  warn: (message: string) => void,
): AddressVerifier | undefined {
  if (options === false) return undefined;
  // A source no request consults would silently check nothing (or keep checking what it meant to turn off).
  for (const name of Object.keys(options?.sources ?? {})) {
    const entry = BOT_CATALOGUE_ENTRIES.find((candidate) => candidate.name === name);
    if (!entry) warn(`crawlerIps.sources names "${name}", which is not a catalogue crawler (names are case-sensitive)`);
    else if (entry.signatureAgent || entry.robotsTxtOnly)
      warn(
        `crawlerIps.sources names "${name}", which ${entry.robotsTxtOnly ? 'is a robots.txt token, never a User-Agent' : 'is verified by its Web Bot Auth signature only'}: the list is never consulted`,
      );
  }
  const ips = createCrawlerIps(catalogueIpSources(BOT_CATALOGUE_ENTRIES), options ?? {}, warn);
  // `sources: { YandexBot: false }` stops checking that crawler, by its host names too.
  const hostNames = new Map(
    [...catalogueReverseDns(BOT_CATALOGUE_ENTRIES)].filter(([name]) => options?.sources?.[name] !== false),
  );
  const dns = options?.reverseDns === false ? undefined : createReverseDns(hostNames, options?.reverseDns ?? {}, warn);
  let warned = false;
  return {
    check(crawler, address, lookUp) {
      // A crawler with a list is verified by it; reverse DNS is for those without one.
      const answer = ips.check(crawler, address) ?? dns?.check(crawler, address, lookUp);
      if (answer === 'out' && !warned && address !== undefined && isInternalAddress(address)) {
        warned = true;
        warn(
          `requests naming ${crawler} come from ${address}, a private or loopback address: behind a proxy, let your framework trust it by hop count or address, never "true", which trusts what the client writes (Express "trust proxy", Fastify trustProxy), or set crawlerIps.clientIp; until then crawlers verified by their address are not allowed`,
        );
      }
      return answer;
    },
    loaded: (crawler, address) => Promise.all([ips.loaded(crawler), dns?.settled(address)]).then(() => undefined),
  };
}

/**
 * A target written exactly as the path its gates bind (route.ts leaves nothing to resolve, and no
 * rewrite routes it elsewhere): every router reads it alike each time, ";" parameters included, so
 * a gate named on it is taken again there whatever its ref binds (one of POST /v1/gates binds none).
 */
function writtenAsItsPath(request: CrawlgateRequest, route: Route): boolean {
  const routed = request.routedUrl === undefined || request.routedUrl === request.url;
  return routed && !route.odd && rawPath(request.url) === route.path;
}

/** What a paid answer says the payment was (crawler-charged): its gate's price, which may be below today's. */
function chargedMicros(decision: Decision): bigint | undefined {
  const charged = decision.kind === 'pass-after-payment' ? decision.headers['crawler-charged'] : undefined;
  const price = charged?.startsWith('USD ') ? parsePriceUsd(charged.slice(4)) : undefined;
  return price?.ok ? price.micros : undefined;
}

/** The request's target as a gate ref binds it (core's newTargetBoundGateRef): as written, and as routed. */
function targetOf(request: CrawlgateRequest): string {
  return JSON.stringify([request.url, request.routedUrl ?? null]);
}

/** What a crawler said it will pay (crawler-max-price, crawler-exact-price), in micro-USD; null: not said. */
interface StatedPrices {
  maxPrice: bigint | null;
  exactPrice: bigint | null;
}

/** Cloudflare's crawler-error code when a charge of `micros` is not what the crawler said it will pay. */
function statedPriceError({ maxPrice, exactPrice }: StatedPrices, micros: bigint): string | undefined {
  if (maxPrice !== null && micros > maxPrice) return 'InvalidCrawlerMaxPrice';
  if (exactPrice !== null && micros !== exactPrice) return 'InvalidCrawlerExactPrice';
  return undefined;
}

/** An error answer as Cloudflare's pay per crawl spells it: the code in crawler-error, the sentence in the body. */
function crawlerError(status: number, code: string, detail: string): Decision {
  return respondJson(status, { detail }, { 'crawler-error': code });
}

function hasPayTo(terms: SiteTerms): terms is SiteTerms & { offer: { pay_to: string } } {
  return typeof terms.offer.pay_to === 'string';
}

function paymentTermsOf(site: SiteOffer): PaymentTerms {
  const terms: PaymentTerms = {
    network: site.network,
    x402Network: site.x402_network,
    caip2: site.caip2,
    assetName: site.asset_name,
    assetVersion: site.asset_version,
  };
  const batch = site.batch_settlement;
  if (batch)
    terms.batchSettlement = {
      escrow: batch.escrow as `0x${string}`,
      receiverAuthorizer: batch.receiver_authorizer as `0x${string}`,
      withdrawDelay: batch.withdraw_delay_seconds,
    };
  return terms;
}

/** Path and query for the offer's `resource`, on the site's own domain; the path alone when too long. */
function resourceTarget(target: string, route: Route): string {
  const query =
    /\?[^#]*/.exec(target.startsWith('/') ? target : target.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, ''))?.[0] ?? '';
  const pathAndQuery = rawPath(target) + query;
  return pathAndQuery.length <= MAX_URL_LENGTH && !/[\s"<>\\^`{|}]/.test(pathAndQuery) ? pathAndQuery : route.path;
}

/** x402 batch-settlement's part of PAYMENT-RESPONSE: the deposit moved (or ""), the charge and the channel. */
function voucherSettlement(paid: PaidGate): Partial<SettleResponse> {
  const voucher = paid.batch_settlement;
  if (!voucher) return {};
  return {
    amount: voucher.deposit_amount ?? '',
    extra: { chargedAmount: voucher.charged_amount, channelState: voucher.channel_state },
  };
}

/** x402's answer to a batch-settlement refund request: 200 with its settlement and no page (x402's server skips the route for it). */
function refundAnswer(refunded: RefundedChannel, payment: Extract<PresentedPayment, { ok: true }>): Decision {
  const settlement: SettleResponse = {
    success: true,
    transaction: refunded.refund_tx_hash,
    network: payment.network,
    payer: refunded.payer,
    amount: refunded.refund_amount,
    extra: { channelState: refunded.channel_state, refundedAmount: refunded.refund_amount },
  };
  return respondJson(
    200,
    { message: 'Refund acknowledged', channelId: refunded.channel_id },
    settlementHeader(payment.via, settlement),
  );
}

function failedSettlement(reason: string, network = '', payer = ''): SettleResponse {
  return { success: false, errorReason: reason, transaction: '', network, payer };
}

/** A person passed: how countVisitor counts one. */
const PERSON_PASSED: CrawlerSighting = Object.freeze({
  crawler: 'person',
  category: 'person',
  operator: null,
  action: 'passed',
  path: null,
  revenueMicros: 0n,
  verified: false,
});
