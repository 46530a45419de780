/*
 * The gate itself, framework-free: one request in, one Decision out. The order of the checks is
 * DESIGN.md's "The middleware's flow":
 *
 *   /.well-known/pay.json → the site's offer; always-free paths (/robots.txt, ...) → pass;
 *   a valid access token for this path → pass, with no network call; people and allowed bots →
 *   pass; blocked bots → 403; an x402 payment header → verify and settle through the API, then
 *   pass with the settlement headers; anything else → 402 with a gate.
 *
 * The API unreachable, slow or failing: failMode 'open' serves, 'closed' answers 503; both warn.
 */

import { parsePriceUsd, requestPath, verifyAccessToken, type SettleResponse } from '@crawlgate/core';
import { createApiClient, CrawlgateApiError, type ApiClient, type GateAnswer, type GateOffer, type SiteOffer, type VerifyAnswer } from './api-client';
import { botPolicyProblems, classifyVisitor, isAlwaysFreePath, type BotAction, type BotPolicy } from './bots';
import { PASS, respondJson, type Decision } from './decision';
import { createTtlCache } from './gate-cache';
import { buildPayJson } from './pay-json';
import { crawlerPrice, headerValue, presentedToken, type HeaderRecord } from './request-headers';
import { hasPaymentHeader, presentedPayment, settlementHeader, type PresentedPayment } from './x402-headers';

export interface CrawlgateRequest {
  method: string;
  /** Path and query ("/post/1?x=y") or an absolute URL. */
  url: string;
  headers: HeaderRecord;
  ip?: string;
}

export interface CrawlgateLogger {
  warn(message: string): void;
}

export interface CrawlgateOptions {
  /** Where the Crawlgate API is, e.g. "https://api.crawlgate.dev". */
  apiUrl: string;
  siteId: string;
  /** The site's `st_…` token: opens gates. Never logged. */
  siteToken: string;
  /** The site's access-token secret; several during a rotation (a token signed with any passes). */
  secret: string | readonly string[];
  /** Which bots pay, pass or are blocked; the catalogue's defaults otherwise. */
  policy?: BotPolicy;
  /** What to do when the API cannot answer: 'open' (default) serves, 'closed' answers 503. */
  failMode?: 'open' | 'closed';
  /** Per API call; default 3000 ms. */
  timeoutMs?: number;
  /** For verifying a payment, which waits for the chain; default 35 000 ms (the API waits up to 30 s, then answers "pending"). */
  verifyTimeoutMs?: number;
  /** Your own bot detection: true = a bot that pays, false = never gated, undefined = use the catalogue. */
  isBot?: (request: CrawlgateRequest) => boolean | undefined;
  /** How long a gate (or a free answer) is reused for the same path and visitor; default 30 000 ms, 0 = never. */
  gateCacheMs?: number;
  /** Default console. Messages never contain tokens, payments or secrets. */
  logger?: CrawlgateLogger;
  /** The fetch used for API calls; default the global one. */
  fetch?: typeof fetch;
}

export interface Crawlgate {
  handle(request: CrawlgateRequest): Promise<Decision>;
}

export const PAY_JSON_PATH = '/.well-known/pay.json';
const PAY_JSON_CACHE_MS = 60_000;
/** A cached gate is not handed out in its last seconds, so the agent has time to pay it. */
const GATE_EXPIRY_MARGIN_MS = 10_000;
/** How long a payment proof is remembered with the gate it was sent for (the API's gate lifetime). */
const PROOF_MEMORY_MS = 15 * 60_000;
/** POST /v1/gates takes at most this many characters of URL. */
const MAX_GATE_URL_LENGTH = 2048;

type Visitor = { kind: 'person' } | { kind: 'bot'; name: string; action: BotAction };

export function createCrawlgate(options: CrawlgateOptions): Crawlgate {
  for (const name of ['apiUrl', 'siteId', 'siteToken'] as const) {
    if (typeof options[name] !== 'string' || options[name] === '') throw new TypeError(`createCrawlgate: ${name} is required`);
  }
  const secrets = typeof options.secret === 'string' ? [options.secret] : [...(options.secret ?? [])];
  if (secrets.length === 0 || secrets.some((s) => typeof s !== 'string' || s === '')) {
    throw new TypeError('createCrawlgate: secret must be a non-empty string or a list of them');
  }
  const failMode = options.failMode ?? 'open';
  const gateCacheMs = options.gateCacheMs ?? 30_000;
  const logger = options.logger ?? console;
  const api: ApiClient = createApiClient({
    apiUrl: options.apiUrl,
    siteToken: options.siteToken,
    timeoutMs: options.timeoutMs ?? 3000,
    verifyTimeoutMs: options.verifyTimeoutMs ?? 35_000,
    fetch: options.fetch,
  });

  const siteOffer = createTtlCache<SiteOffer>({ ttlMs: () => PAY_JSON_CACHE_MS });
  const gates = createTtlCache<GateAnswer>({
    ttlMs: (answer) => (answer.kind === 'free' ? gateCacheMs : Math.min(gateCacheMs, Date.parse(answer.offer.expires_at) - GATE_EXPIRY_MARGIN_MS - Date.now())),
  });
  // A proof sent again (a lost answer, a 503 while settling) must reach the same gate: the API
  // then returns the same result instead of 409 "used for another gate".
  const proofs = createTtlCache<string>({ ttlMs: () => PROOF_MEMORY_MS });

  const warn = (message: string) => logger.warn(`crawlgate: ${message}`);
  // A typo in the policy would otherwise charge or free bots silently, request after request.
  for (const problem of botPolicyProblems(options.policy)) warn(problem);

  function tokenOpens(token: string, url: string): string | undefined {
    const check = verifyAccessToken(token, { secret: secrets, siteId: options.siteId, url });
    return check.valid ? check.payload.gate_id : undefined;
  }

  function classify(request: CrawlgateRequest, token: string | undefined): Visitor {
    const verdict = options.isBot?.(request);
    if (verdict === false) return { kind: 'person' };
    const visitor = classifyVisitor(headerValue(request.headers, 'user-agent'), options.policy);
    if (visitor.kind === 'bot') return { kind: 'bot', name: visitor.name, action: visitor.action };
    // Whoever presents a payment or a token is an agent, whatever its user agent says.
    const agent = verdict === true || token !== undefined || hasPaymentHeader(request.headers);
    return agent ? { kind: 'bot', name: 'unlisted agent', action: 'charge' } : { kind: 'person' };
  }

  async function payJson(): Promise<Decision> {
    const site = await siteOffer.get('site', () => api.site());
    return respondJson(200, buildPayJson(site, options.apiUrl), { 'cache-control': `public, max-age=${PAY_JSON_CACHE_MS / 1000}` });
  }

  async function charge(request: CrawlgateRequest, path: string): Promise<Decision> {
    const maxPrice = crawlerPrice(request.headers, 'crawler-max-price');
    const exactPrice = crawlerPrice(request.headers, 'crawler-exact-price');
    if (maxPrice === undefined || exactPrice === undefined) {
      const detail = 'crawler-max-price and crawler-exact-price must read like "USD 0.01"';
      return respondJson(400, { detail }, { 'crawler-error': detail });
    }
    const target = gateUrl(request.url);
    if (!target) return respondJson(414, { detail: `URL longer than ${MAX_GATE_URL_LENGTH} characters` });

    const key = visitorKey(path, request);
    const openGate = () => gates.get(key, () => api.createGate(target));
    const gate = await openGate();
    if (gate.kind === 'free') return PASS;

    // Cloudflare's convention: the crawler states what it will pay; we never take more.
    const price = priceMicros(gate.offer);
    if (maxPrice !== null && price > maxPrice) return paymentRequired(gate, { 'crawler-error': 'The price is above crawler-max-price' });
    if (exactPrice !== null && price !== exactPrice) return paymentRequired(gate, { 'crawler-error': 'crawler-exact-price is not the price' });

    const payment = presentedPayment(request.headers);
    if (!payment) return paymentRequired(gate);
    if (!payment.ok) return paymentRequired(gate, settlementHeader(payment.via, failedSettlement('invalid_payload')));

    const proof = `${payment.parsed.payload.authorization.from.toLowerCase()}:${payment.parsed.payload.authorization.nonce}`;
    let offered = gate;
    let answer: VerifyAnswer = { kind: 'gone' };
    // The cached gate may have expired or been paid by another proof meanwhile: then one fresh gate.
    for (let attempt = 0; attempt < 2; attempt++) {
      if (attempt > 0) {
        proofs.drop(proof);
        gates.drop(key);
        const fresh = await openGate();
        if (fresh.kind === 'free') return PASS;
        offered = fresh;
      }
      const gateId = await proofs.get(proof, async () => offered.offer.id);
      answer = await api.verify(gateId, payment.payment);
      if (answer.kind !== 'gone' && answer.kind !== 'conflict') break;
    }
    return settled(answer, offered, payment, key, request.url);
  }

  function settled(answer: VerifyAnswer, gate: Priced, payment: Extract<PresentedPayment, { ok: true }>, key: string, url: string): Decision {
    const { via, parsed } = payment;
    switch (answer.kind) {
      case 'paid': {
        const { paid } = answer;
        gates.drop(key, (cached) => cached.kind === 'priced' && cached.offer.id === paid.gate_id);
        if (!tokenOpens(paid.access_token, url)) {
          warn(`the API issued an access token for gate ${paid.gate_id} that the configured secret does not verify for ${requestPath(url)}: check the secret option`);
        }
        const settlement: SettleResponse = { success: true, transaction: paid.tx_hash, network: parsed.network, payer: paid.payer };
        return {
          kind: 'pass-after-payment',
          headers: {
            ...settlementHeader(via, settlement),
            'crawler-charged': `USD ${paid.price_usd}`,
            'x-crawlgate-token': paid.access_token,
            'cache-control': 'no-store',
          },
        };
      }
      case 'pending':
        // Not 402: the payment is on its way, and a 402 would make the client sign a second one.
        gates.drop(key);
        return respondJson(
          503,
          { detail: 'Payment sent to the chain, not confirmed yet. Retry with the same payment header after Retry-After seconds; it is never charged twice.' },
          { 'retry-after': String(answer.retryAfterSeconds) },
        );
      case 'rejected':
        return paymentRequired(gate, settlementHeader(via, failedSettlement(answer.reason, parsed.network, parsed.payload.authorization.from)));
      case 'conflict':
      case 'gone':
        return paymentRequired(gate, settlementHeader(via, failedSettlement('duplicate_settlement', parsed.network, parsed.payload.authorization.from)));
    }
  }

  function failed(error: CrawlgateApiError): Decision {
    warn(`${error.message}; failMode ${failMode}: ${failMode === 'open' ? 'serving the request' : 'answering 503'}`);
    if (failMode === 'open') return PASS;
    return respondJson(503, { detail: 'The payment gate is unavailable; retry later' }, { 'retry-after': '30' });
  }

  return {
    async handle(request) {
      const path = requestPath(request.url);
      try {
        if (path === PAY_JSON_PATH && (request.method === 'GET' || request.method === 'HEAD')) return await payJson();
        // Given the raw target: it normalises it as pricing does (normalising twice could read a decoded "?" as a query).
        if (isAlwaysFreePath(request.url)) return PASS;

        const token = presentedToken(request.headers);
        const paidGate = token === undefined ? undefined : tokenOpens(token, request.url);
        if (paidGate) {
          // Paid (perhaps straight at verify_url): the gate this visitor was offered is spent.
          gates.drop(visitorKey(path, request), (cached) => cached.kind === 'priced' && cached.offer.id === paidGate);
          return PASS;
        }

        const visitor = classify(request, token);
        if (visitor.kind === 'person' || visitor.action === 'allow') return PASS;
        if (visitor.action === 'block') return respondJson(403, { detail: `${visitor.name} may not crawl this site` });
        return await charge(request, path);
      } catch (error) {
        if (error instanceof CrawlgateApiError) return failed(error);
        throw error;
      }
    },
  };
}

type Priced = Extract<GateAnswer, { kind: 'priced' }>;

/**
 * Gates are cached per path and visitor, not per path alone: two agents handed one gate would
 * race to pay it, and the loser's payment would be refused (409) for the rest of the cache time.
 */
function visitorKey(path: string, request: CrawlgateRequest): string {
  return `${path}\n${request.ip ?? ''}\n${headerValue(request.headers, 'user-agent') ?? ''}`;
}

/** 402 with the API's gate as the body, its x402 v2 header, and the price in Cloudflare's form. */
function paymentRequired(gate: Priced, headers: Record<string, string> = {}): Decision {
  return respondJson(402, gate.offer, {
    ...(gate.paymentRequired ? { 'payment-required': gate.paymentRequired } : {}),
    'crawler-price': `USD ${gate.offer.price_usd}`,
    ...headers,
  });
}

function failedSettlement(reason: string, network = '', payer = ''): SettleResponse {
  return { success: false, errorReason: reason, transaction: '', network, payer };
}

function priceMicros(offer: GateOffer): bigint {
  const parsed = parsePriceUsd(offer.price_usd);
  if (!parsed.ok) throw new CrawlgateApiError(`POST /v1/gates: unreadable price_usd ${JSON.stringify(offer.price_usd).slice(0, 40)}`);
  return parsed.micros;
}

/** What POST /v1/gates gets: path and query; the path alone when that is too long (the query never changes the price). */
function gateUrl(url: string): string | undefined {
  let pathAndQuery = url;
  if (!url.startsWith('/')) {
    try {
      const parsed = new URL(url);
      pathAndQuery = parsed.pathname + parsed.search;
    } catch {
      pathAndQuery = '/' + url;
    }
  }
  if (pathAndQuery.length <= MAX_GATE_URL_LENGTH) return pathAndQuery;
  const pathOnly = pathAndQuery.replace(/[?#].*$/s, '');
  return pathOnly.length <= MAX_GATE_URL_LENGTH ? pathOnly : undefined;
}

