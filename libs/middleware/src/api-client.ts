/*
 * The Crawlgate API calls the middleware makes, over global fetch with a timeout each: the site's
 * terms (in the background), a payment's verification, batched gate counts, and sign-in-with-x proofs. Every
 * answer the gate can act on comes back as a value (a payment's 429 too: it took nothing); anything
 * else (unreachable, timed out, 5xx, another call's 429, a status or body it cannot use) is a
 * CrawlgateApiError, which the gate answers 402 or 503 for, never with the page. Error messages
 * name the call and the cause, never the site token or the API URL (which may carry credentials).
 */

import type {
  ChannelCorrection,
  GateCountsReport,
  GateOffer,
  PaidGate,
  RefundedChannel,
  SiteOffer,
  SiwxAccess,
  SiwxAccessRequest,
  VerifyPaymentRequest,
} from '@crawlgate/core';
import {
  BodyTooLargeError,
  cappedText,
  DeadlineError,
  isLoopbackHost,
  literalRedactor,
  parseRetryAfter,
  withinDeadline,
} from '@crawlgate/core';
import {
  errorDetailOf,
  isApiErrorBody,
  notChargingDetailOf,
  paidGateOf,
  pendingOf,
  refundedOf,
  rejectionOf,
  siteOfferOf,
  siwxAccessOf,
} from './api-answers';

export type { GateOffer, PaidGate, SiteOffer };

/** The most of an API's "took nothing" detail passed on to a payer. */
const MAX_NOT_CHARGED_DETAIL_LENGTH = 300;

export type VerifyAnswer =
  | { kind: 'paid'; paid: PaidGate }
  /** 200 for a batch-settlement refund payload: nothing paid; the channel's rest went back to its payer. */
  | { kind: 'refunded'; refunded: RefundedChannel }
  /** 202: sent to the chain, not confirmed yet; the same proof again gets the final answer. */
  | { kind: 'pending'; retryAfterSeconds: number }
  /** 402: the proof does not pay this gate; `reason` is an x402 reason code; `correction` for x402's corrective 402 (batch-settlement). */
  | { kind: 'rejected'; detail: string; reason: string; correction?: ChannelCorrection }
  /** 404: the gate expired (or never existed). */
  | { kind: 'gone' }
  /** 409: the proof paid another gate, or another proof paid (or is paying) this one. */
  | { kind: 'conflict'; detail: string }
  /** 503 that took nothing (`charged: false`): the same proof again after Retry-After. */
  | { kind: 'not-charged'; detail: string; retryAfterSeconds: number }
  /** 429: the API's rate limit refused the call before it was acted on (the same proof may be settling from an earlier send). */
  | { kind: 'throttled'; retryAfterSeconds: number };

export interface ApiClientOptions {
  apiUrl: string;
  siteToken: string;
  timeoutMs: number;
  fetch?: typeof fetch;
}

export interface ApiClient {
  site(): Promise<SiteOffer>;
  /**
   * `timeoutMs`: verify waits for the settlement on chain, so it gets longer than the other calls.
   * `recordedOnly`: the API answers for a payment of this gate it already recorded, and settles none.
   */
  verify(
    gateId: string,
    payment: Record<string, unknown>,
    timeoutMs: number,
    recordedOnly?: boolean,
  ): Promise<VerifyAnswer>;
  reportGateCounts(report: GateCountsReport): Promise<void>;
  /** A sign-in-with-x proof for a path: the paid token again, or null when the API refused the proof. */
  siwx(request: SiwxAccessRequest): Promise<SiwxAccess | null>;
}

/** Far above any answer the API gives (a site's terms with its 1,000 price rules): only a broken or hostile API sends more. */
const MAX_API_ANSWER_BYTES = 16 * 1024 * 1024;

export class CrawlgateApiError extends Error {
  override name = 'CrawlgateApiError';

  /**
   * The API's HTTP status; undefined when it gave no usable answer: unreachable, timed out, a 2xx
   * whose body is not core's type of it, or a redirect or 4xx without the API's error body (the API
   * may have acted on the call, so it counts as no answer).
   */
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

interface Answer {
  status: number;
  headers: Headers;
  /** The parsed JSON, of any type: the readers of api-answers.ts check it against core's types. */
  body: unknown;
}

/**
 * Refuses an apiUrl the gate must not call: not an absolute http(s) URL, one holding credentials
 * (fetch refuses it, and quotes it whole in the error a warning would carry), or plain http off
 * loopback unless `allowPlainHttp` (the site token and every payment would cross the network in
 * clear). The message never quotes the URL.
 */
export function checkApiUrl(apiUrl: string, allowPlainHttp: boolean): void {
  let url: URL;
  try {
    url = new URL(apiUrl);
  } catch {
    throw new TypeError('createCrawlgate: apiUrl must be an absolute http(s) URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new TypeError('createCrawlgate: apiUrl must be an http(s) URL');
  if (url.username !== '' || url.password !== '')
    throw new TypeError(
      'createCrawlgate: apiUrl must hold no user name or password (the site token is the credential)',
    );
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname) && !allowPlainHttp)
    throw new TypeError(
      `createCrawlgate: apiUrl ${url.origin} is plain http: the site token and payments would cross the network in clear. Use https, or set allowPlainHttpApi on a network you trust`,
    );
}

export function createApiClient(options: ApiClientOptions): ApiClient {
  const base = options.apiUrl.replace(/\/+$/, '');
  const redactToken = literalRedactor([options.siteToken]);
  const doFetch = options.fetch ?? globalThis.fetch;

  async function call(
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    timeoutMs: number,
    label: string,
  ): Promise<Answer> {
    let response: Response;
    let text: string;
    // The gate's own deadline beside the signal: a fetch of the publisher's may ignore it, and a call
    // that never ends would hold every request at start-up and every refresh after it.
    const read = async () => {
      const answer = await doFetch(base + path, {
        method,
        headers: {
          'x-site-token': options.siteToken,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        // The API never redirects; followed, a redirect would carry the site token to another host.
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
      return { answer, text: await cappedText(answer, MAX_API_ANSWER_BYTES, 'the answer') };
    };
    try {
      ({ answer: response, text } = await withinDeadline(read(), timeoutMs));
    } catch (error) {
      throw new CrawlgateApiError(`${label}: ${describeFetchError(error, timeoutMs)}`);
    }
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, body: parsed };
  }

  return {
    async site() {
      const label = 'GET /v1/site';
      const answer = await call('GET', '/v1/site', undefined, options.timeoutMs, label);
      const offer = answer.status === 200 ? siteOfferOf(answer.body) : undefined;
      if (offer) return offer;
      throw unexpected(label, answer, redactToken);
    },

    async verify(gateId, payment, timeoutMs, recordedOnly = false) {
      const label = 'POST /v1/gates/{id}/verify';
      const request: VerifyPaymentRequest = recordedOnly ? { payment, recorded_only: true } : { payment };
      const path = `/v1/gates/${encodeURIComponent(gateId)}/verify`;
      const answer = await call('POST', path, request, timeoutMs, label);
      const { status, body } = answer;
      if (status === 200) {
        const paid = paidGateOf(body, gateId);
        if (paid) return { kind: 'paid', paid };
        const refunded = refundedOf(body, gateId);
        if (refunded) return { kind: 'refunded', refunded };
      } else if (status === 202) {
        if (pendingOf(body, gateId)) return { kind: 'pending', retryAfterSeconds: retryAfter(answer.headers) };
      } else if (status === 402) {
        const rejection = rejectionOf(body);
        if (rejection) return { kind: 'rejected', ...rejection };
      } else if (status === 404 && isApiErrorBody(body)) {
        return { kind: 'gone' };
      } else if (status === 409) {
        const detail = errorDetailOf(body);
        if (detail !== undefined) return { kind: 'conflict', detail };
      } else if (status === 429 && isApiErrorBody(body)) {
        return { kind: 'throttled', retryAfterSeconds: retryAfter(answer.headers) };
      } else if (status === 503) {
        const detail = notChargingDetailOf(body);
        // Said to the payer: the site token blanked (before the cut), and no longer than any detail of the API's.
        if (detail !== undefined)
          return {
            kind: 'not-charged',
            detail: redactToken(detail).slice(0, MAX_NOT_CHARGED_DETAIL_LENGTH),
            retryAfterSeconds: retryAfter(answer.headers),
          };
      }
      throw unexpected(label, answer, redactToken);
    },

    async reportGateCounts(report) {
      const label = 'POST /v1/site/gate-counts';
      const answer = await call('POST', '/v1/site/gate-counts', report, options.timeoutMs, label);
      if (answer.status !== 204) throw unexpected(label, answer, redactToken);
    },

    async siwx(request) {
      const label = 'POST /v1/access-tokens/siwx';
      const answer = await call('POST', '/v1/access-tokens/siwx', request, options.timeoutMs, label);
      const { status, body } = answer;
      if (status === 200) {
        const access = siwxAccessOf(body);
        if (access) return access;
      }
      // The proof's fault (malformed, not ours, not the payer, no live payment, replayed), as the API says it.
      const refusal = status === 400 || status === 401 || status === 402 || status === 409 || status === 422;
      if (refusal && isApiErrorBody(body)) return null;
      throw unexpected(label, answer, redactToken);
    },
  };
}

/** The API's Retry-After; a few seconds when it says none, now, or more than a number can hold. */
function retryAfter(headers: Headers): number {
  const seconds = parseRetryAfter(headers.get('retry-after'));
  return seconds !== undefined && Number.isSafeInteger(seconds) && seconds > 0 ? seconds : 5;
}

/** `redactToken`: blanks the site token in the detail before it is cut, or an echo of it cut short would escape redaction. */
function unexpected(label: string, answer: Answer, redactToken: (text: string) => string): CrawlgateApiError {
  const { status } = answer;
  // A 2xx it cannot read may still have been acted on (a payment settled): it is no answer, not a refusal.
  if (status >= 200 && status < 300)
    return new CrawlgateApiError(`${label}: HTTP ${status} with a body that is not the API's answer`);
  // The API's details are about the request (bad token, no payout address), never secrets.
  const detail = errorDetailOf(answer.body);
  // A refusal is the API's when it says why (its error body) or is a 402, which no proxy sends. A
  // redirect, or a 4xx with neither (a proxy's, a load balancer's), is no answer: the call may
  // have reached the API and been acted on.
  const theApis = isApiErrorBody(answer.body) || status === 402 || status >= 500;
  return new CrawlgateApiError(
    `${label}: unexpected HTTP ${status}${detail === undefined ? '' : `: ${redactToken(detail).slice(0, 200)}`}`,
    theApis ? status : undefined,
  );
}

function describeFetchError(error: unknown, timeoutMs: number): string {
  // Duck-typed, not instanceof: fetch's errors may come from another realm (a test VM, a bundler's polyfill).
  const { name, message, cause } = (error ?? {}) as {
    name?: unknown;
    message?: unknown;
    cause?: { code?: unknown; message?: unknown };
  };
  if (name === 'TimeoutError' || name === 'AbortError' || error instanceof DeadlineError)
    return `no answer within ${timeoutMs} ms`;
  if (error instanceof BodyTooLargeError) return error.message;
  if (typeof cause?.code === 'string') return `unreachable (${cause.code})`;
  const why = [message, cause?.message].filter((part) => typeof part === 'string').join(': ');
  return `unreachable (${why || String(error)})`;
}
