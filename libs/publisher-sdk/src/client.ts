import { encodeHeaderText, isAccessTokenSecretFormat, isApiKeyFormat, isSiteTokenFormat } from '@crawlgate/core';
import { apiBaseUrl, refusePlainHttp, send, type Call, type FetchLike } from './http';
import type {
  BotAction,
  BotPolicyInput,
  CreatedSite,
  CreateSiteInput,
  DeletedSite,
  IssuedApiKey,
  LoginInput,
  ChangePasswordInput,
  PageQuery,
  PriceResolution,
  Pricing,
  PricingApplied,
  PricingInput,
  Publisher,
  RegisteredPublisher,
  RegisterInput,
  RotatedSiteToken,
  SecretRotation,
  Site,
  SiteBotPolicy,
  SiteCrawlersView,
  SiteList,
  SitePayment,
  SitePaymentPage,
  SiteChannelsView,
  SiteStats,
  PublisherStats,
  StatsQuery,
  UpdatePublisherInput,
  UpdateSiteInput,
} from './types';

export interface PublisherClientOptions {
  /** The API's base URL, e.g. `https://api.crawlgate.example` (a trailing `/v1` is accepted). */
  apiUrl: string;
  /** `xk_pub_…`. Optional: register() and login() set it. */
  apiKey?: string;
  /** Per attempt. Default 10 000. */
  timeoutMs?: number;
  /** Retries of a 429 (any method) and of a network failure (GET only). Default 2. */
  maxRetries?: number;
  /** Longest Retry-After the client waits out. Default 30 000. */
  maxRetryWaitMs?: number;
  /** Defaults to the global fetch. */
  fetch?: FetchLike;
  /**
   * Let apiUrl be plain http off loopback (a network you trust): the password and the API key
   * cross it in clear. Default false: such an apiUrl is refused (TypeError).
   */
  allowPlainHttp?: boolean;
}

export interface RotateSecretOptions {
  /** How long the previous secret keeps verifying, in seconds; 0 revokes it at once. */
  graceSeconds?: number;
}

export interface UpdateMeOptions {
  /** The account password; required when `payout_address` changes. */
  password?: string;
}

/** Typed access to every endpoint a publisher's API key opens. Methods throw ApiError on failure. */
export class PublisherClient {
  // A private field, so the key never shows in console.log(client) or JSON.stringify(client).
  #apiKey: string | undefined;
  readonly #send: (call: Call) => Promise<unknown>;

  constructor(options: PublisherClientOptions) {
    const baseUrl = apiBaseUrl(options.apiUrl);
    if (!options.allowPlainHttp) refusePlainHttp(baseUrl);
    const transport = {
      baseUrl,
      timeoutMs: integerOption('timeoutMs', options.timeoutMs ?? 10_000, 1, MAX_TIMER_MS),
      retry: {
        maxRetries: integerOption('maxRetries', options.maxRetries ?? 2, 0, MAX_RETRIES),
        maxWaitMs: integerOption('maxRetryWaitMs', options.maxRetryWaitMs ?? 30_000, 0, MAX_TIMER_MS),
      },
      fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    };
    // A key read with a line break (a CRLF secret file) would fail in the header, and the error
    // names the header's value: refused here, without quoting it.
    if (options.apiKey !== undefined && !/^[\x21-\x7e]+$/.test(options.apiKey))
      throw new TypeError(
        'The API key holds characters no key has (a line break or a space?): check where it was read from',
      );
    this.#apiKey = options.apiKey;
    this.#send = (call) => send(transport, call);
  }

  /** Whether calls that need a key have one (the key itself is not readable back). */
  get hasApiKey(): boolean {
    return this.#apiKey !== undefined;
  }

  // Publisher account

  /** Creates the account; the returned key is shown once and used by this client from now on. */
  async register(input: RegisterInput): Promise<RegisteredPublisher> {
    const publisher = (await this.#send({
      method: 'POST',
      path: '/publishers/register',
      body: input,
      issues: ISSUES_API_KEY,
    })) as RegisteredPublisher;
    this.#apiKey = publisher.api_key;
    return publisher;
  }

  /** Logging in rotates the key: the previous one stops working. This client uses the new one. */
  async login(input: LoginInput): Promise<IssuedApiKey> {
    const issued = (await this.#send({
      method: 'POST',
      path: '/publishers/login',
      body: input,
      issues: ISSUES_API_KEY,
    })) as IssuedApiKey;
    this.#apiKey = issued.api_key;
    return issued;
  }

  me(): Promise<Publisher> {
    return this.#authed({ method: 'GET', path: '/publishers/me' });
  }

  /** Changing `payout_address` needs `options.password`, sent as X-Confirm-Password (an RFC 8187 ext-value: any password arrives as typed). */
  updateMe(changes: UpdatePublisherInput, options: UpdateMeOptions = {}): Promise<Publisher> {
    const headers =
      options.password === undefined ? undefined : { 'x-confirm-password': encodeHeaderText(options.password) };
    return this.#authed({ method: 'PATCH', path: '/publishers/me', body: changes, headers });
  }

  /** The previous key stops working at once; this client uses the new one. */
  async rotateApiKey(): Promise<IssuedApiKey> {
    const issued = await this.#authed<IssuedApiKey>({
      method: 'POST',
      path: '/publishers/me/api-key/rotate',
      issues: ISSUES_API_KEY,
    });
    this.#apiKey = issued.api_key;
    return issued;
  }

  /** Proven by the current password; the previous key and password stop working at once, and this client uses the new key. */
  async changePassword(input: ChangePasswordInput): Promise<IssuedApiKey> {
    const issued = await this.#authed<IssuedApiKey>({
      method: 'POST',
      path: '/publishers/me/password',
      body: input,
      issues: ISSUES_API_KEY,
    });
    this.#apiKey = issued.api_key;
    return issued;
  }

  // Sites

  /** site_token and access_token_secret are in this answer only: store them now. */
  createSite(input: CreateSiteInput): Promise<CreatedSite> {
    return this.#authed({
      method: 'POST',
      path: '/sites',
      body: input,
      issues: { site_token: isSiteTokenFormat, access_token_secret: isAccessTokenSecretFormat },
    });
  }

  listSites(): Promise<SiteList> {
    return this.#authed({ method: 'GET', path: '/sites' });
  }

  getSite(siteId: string): Promise<Site> {
    return this.#authed({ method: 'GET', path: sitePath(siteId) });
  }

  updateSite(siteId: string, changes: UpdateSiteInput): Promise<Site> {
    return this.#authed({ method: 'PATCH', path: sitePath(siteId), body: changes });
  }

  deleteSite(siteId: string): Promise<DeletedSite> {
    return this.#authed({ method: 'DELETE', path: sitePath(siteId) });
  }

  /** The previous site token stops working at once: update the middleware's configuration. */
  rotateSiteToken(siteId: string): Promise<RotatedSiteToken> {
    return this.#authed({
      method: 'POST',
      path: `${sitePath(siteId)}/site-token/rotate`,
      issues: { site_token: isSiteTokenFormat },
    });
  }

  /**
   * Tokens signed with the previous secret keep verifying until `previous_valid_until`:
   * `graceSeconds` from now (0 revokes it at once, for a leaked secret), by default the API's
   * SECRET_GRACE_SECONDS, which is also the most it accepts.
   */
  rotateSecret(siteId: string, options: RotateSecretOptions = {}): Promise<SecretRotation> {
    // No body unless asked: the API's default grace applies.
    const body = options.graceSeconds === undefined ? undefined : { grace_seconds: options.graceSeconds };
    return this.#authed({
      method: 'POST',
      path: `${sitePath(siteId)}/secret/rotate`,
      body,
      issues: { access_token_secret: isAccessTokenSecretFormat },
    });
  }

  // Pricing

  /** Replaces the default price and every rule. */
  setPricing(siteId: string, pricing: PricingInput): Promise<PricingApplied> {
    return this.#authed({ method: 'PUT', path: `${sitePath(siteId)}/pricing`, body: pricing });
  }

  getPricing(siteId: string): Promise<Pricing> {
    return this.#authed({ method: 'GET', path: `${sitePath(siteId)}/pricing` });
  }

  /** Which rule wins for a path (or URL), and its price. */
  resolvePrice(siteId: string, path: string): Promise<PriceResolution> {
    return this.#authed({ method: 'GET', path: `${sitePath(siteId)}/pricing/resolve`, query: { path } });
  }

  // Bot policy: what the site's middleware does with each kind of crawler

  /** The stored policy, with the middleware's default action per category. */
  getBotPolicy(siteId: string): Promise<SiteBotPolicy> {
    return this.#authed({ method: 'GET', path: `${sitePath(siteId)}/bot-policy` });
  }

  /** Replaces the whole policy: what `policy` leaves out is cleared. */
  setBotPolicy(siteId: string, policy: BotPolicyInput): Promise<SiteBotPolicy> {
    return this.#authed({ method: 'PUT', path: `${sitePath(siteId)}/bot-policy`, body: policy });
  }

  /** One crawler's own action (catalogue name, any case), keeping the rest; answers the whole policy. */
  setBotAction(siteId: string, name: string, action: BotAction): Promise<SiteBotPolicy> {
    return this.#authed({ method: 'PUT', path: botPath(siteId, name), body: { action } });
  }

  /** Drops a crawler's own action, so its category's (or the default) applies again; answers the whole policy. */
  removeBotAction(siteId: string, name: string): Promise<SiteBotPolicy> {
    return this.#authed({ method: 'DELETE', path: botPath(siteId, name) });
  }

  // Reporting

  /** Stats over every site of yours at once (default: the last 30 UTC days): exact top lists and distinct agents. */
  stats(range: StatsQuery = {}): Promise<PublisherStats> {
    return this.#authed({ method: 'GET', path: '/publishers/me/stats', query: rangeQuery(range) });
  }

  siteStats(siteId: string, range: StatsQuery = {}): Promise<SiteStats> {
    return this.#authed({ method: 'GET', path: `${sitePath(siteId)}/stats`, query: rangeQuery(range) });
  }

  /** Requests per crawler over whole UTC days (default: the last 30): what the gate did, revenue, verified share, top paths; and requests per day and action. */
  siteCrawlers(siteId: string, range: StatsQuery = {}): Promise<SiteCrawlersView> {
    return this.#authed({ method: 'GET', path: `${sitePath(siteId)}/crawlers`, query: rangeQuery(range) });
  }

  /** The same crawlers as CSV text (RFC 4180), one row per crawler, top paths left out. */
  siteCrawlersCsv(siteId: string, range: StatsQuery = {}): Promise<string> {
    return this.#authed({
      method: 'GET',
      path: `${sitePath(siteId)}/crawlers.csv`,
      query: rangeQuery(range),
      acceptText: 'text/csv',
    });
  }

  /** The site's x402 batch-settlement voucher revenue: claimed on chain, and still in the payers' channels. */
  siteChannels(siteId: string): Promise<SiteChannelsView> {
    return this.#authed({ method: 'GET', path: `${sitePath(siteId)}/channels` });
  }

  /** One page of confirmed payments, newest first. */
  sitePayments(siteId: string, page: PageQuery = {}): Promise<SitePaymentPage> {
    return this.#authed({
      method: 'GET',
      path: `${sitePath(siteId)}/payments`,
      query: { limit: page.limit, cursor: page.cursor },
    });
  }

  /** Every confirmed payment, newest first, fetching pages of `limit` as the loop advances. */
  async *iterateSitePayments(
    siteId: string,
    options: { limit?: number } = {},
  ): AsyncGenerator<SitePayment, void, undefined> {
    let cursor: string | undefined;
    const seen = new Set<string>();
    do {
      const page = await this.sitePayments(siteId, { limit: options.limit, cursor });
      yield* page.items;
      cursor = page.next_cursor ?? undefined;
      // A cursor sent again would have the loop read the same pages for ever.
      if (cursor !== undefined && seen.has(cursor))
        throw new Error(`The API sent the cursor ${JSON.stringify(cursor.slice(0, 64))} again; stopped listing`);
      if (cursor !== undefined) seen.add(cursor);
    } while (cursor !== undefined);
  }

  #authed<T>(call: Call): Promise<T> {
    // Without a key the API answers 401 with its own detail, which is the one error to report.
    const headers: Record<string, string> = { ...call.headers };
    if (this.#apiKey !== undefined) headers.authorization = `Bearer ${this.#apiKey}`;
    return this.#send({ ...call, headers }) as Promise<T>;
  }
}

/** The longest delay a timer keeps (Node sets a longer one to 1 ms), and the most retries a caller may ask. */
const MAX_TIMER_MS = 2 ** 31 - 1;
const MAX_RETRIES = 10;

/** An option's value, if a whole number within its bounds: NaN retried for ever, a huge timeout fired at once. */
function integerOption(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max)
    throw new TypeError(`${name} must be a whole number from ${min} to ${max}, got ${String(value)}`);
  return value;
}

/** What a call that issues an API key must answer: the key, else the client keeps the one it has. */
const ISSUES_API_KEY = { api_key: isApiKeyFormat };

/** Encoded, so an id can never step into another path (`../`, `?`). */
function sitePath(siteId: string): string {
  return `/sites/${pathSegment(siteId)}`;
}

function botPath(siteId: string, name: string): string {
  return `${sitePath(siteId)}/bot-policy/bots/${pathSegment(name)}`;
}

/**
 * One path segment, whatever the value. "." and ".." are refused, not escaped: the URL parser reads
 * them as steps up the path in either spelling (`%2E%2E` too), and no id or crawler name is one.
 */
function pathSegment(value: string): string {
  if (value === '' || value === '.' || value === '..')
    throw new RangeError(`${JSON.stringify(value)} is not a site id or crawler name`);
  return encodeURIComponent(value);
}

function rangeQuery(range: StatsQuery): Record<string, string | undefined> {
  return { from: dayParam(range.from), to: dayParam(range.to) };
}

function dayParam(value: string | Date | undefined): string | undefined {
  return value instanceof Date ? value.toISOString() : value;
}
