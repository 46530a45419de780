/*
 * The Crawlgate API calls the middleware makes, over global fetch with a timeout each: the site's
 * terms (in the background), a payment's verification, batched gate counts, and sign-in-with-x proofs. Every
 * answer the gate can act on comes back as a value; anything else (unreachable, timed out, 5xx,
 * 429, a status or body it cannot use) is a CrawlgateApiError, which the gate answers 402 or 503
 * for, never with the page. Error messages name the call and the cause, never the site token or
 * the API URL (which may carry credentials).
 */

import type {
  ChannelCorrection,
  ChannelStateView,
  GateCountsReport,
  GateOffer,
  PaidGate,
  SiteOffer,
  SiwxAccess,
  SiwxAccessRequest,
  VoucherStateView,
} from '@crawlgate/core';

export type { GateOffer, PaidGate, SiteOffer };

export type VerifyAnswer =
  | { kind: 'paid'; paid: PaidGate }
  /** 202: sent to the chain, not confirmed yet; the same proof again gets the final answer. */
  | { kind: 'pending'; retryAfterSeconds: number }
  /** 402: the proof does not pay this gate; `reason` is an x402 reason code; `correction` for x402's corrective 402 (batch-settlement). */
  | { kind: 'rejected'; detail: string; reason: string; correction?: ChannelCorrection }
  /** 404: the gate expired (or never existed). */
  | { kind: 'gone' }
  /** 409: the proof paid another gate, or another proof paid (or is paying) this one. */
  | { kind: 'conflict'; detail: string };

export interface ApiClientOptions {
  apiUrl: string;
  siteToken: string;
  timeoutMs: number;
  fetch?: typeof fetch;
}

export interface ApiClient {
  site(): Promise<SiteOffer>;
  /** `timeoutMs`: verify waits for the settlement on chain, so it gets longer than the other calls. */
  verify(gateId: string, payment: Record<string, unknown>, timeoutMs: number): Promise<VerifyAnswer>;
  reportGateCounts(report: GateCountsReport): Promise<void>;
  /** A sign-in-with-x proof for a path: the paid token again, or null when the API refused the proof. */
  siwx(request: SiwxAccessRequest): Promise<SiwxAccess | null>;
}

export class CrawlgateApiError extends Error {
  override name = 'CrawlgateApiError';

  /** The API's HTTP status; undefined when it did not answer (unreachable, timed out). */
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
  body: Record<string, unknown> | undefined;
}

export function createApiClient(options: ApiClientOptions): ApiClient {
  const base = options.apiUrl.replace(/\/+$/, '');
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
    try {
      response = await doFetch(base + path, {
        method,
        headers: {
          'x-site-token': options.siteToken,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      throw new CrawlgateApiError(`${label}: ${describeFetchError(error, timeoutMs)}`);
    }
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const record =
      typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
        ? (parsed as Record<string, unknown>)
        : undefined;
    return { status: response.status, headers: response.headers, body: record };
  }

  return {
    async site() {
      const label = 'GET /v1/site';
      const answer = await call('GET', '/v1/site', undefined, options.timeoutMs, label);
      if (answer.status === 200 && isSiteOffer(answer.body)) return answer.body;
      throw unexpected(label, answer);
    },

    async verify(gateId, payment, timeoutMs) {
      const label = 'POST /v1/gates/{id}/verify';
      const answer = await call(
        'POST',
        `/v1/gates/${encodeURIComponent(gateId)}/verify`,
        { payment },
        timeoutMs,
        label,
      );
      const { status, body } = answer;
      if (status === 200 && typeof body?.access_token === 'string')
        return { kind: 'paid', paid: body as unknown as PaidGate };
      if (status === 202) return { kind: 'pending', retryAfterSeconds: retryAfter(answer.headers) };
      if (status === 402) {
        const reason = typeof body?.reason === 'string' ? body.reason : 'invalid_payload';
        const correction = correctionOf(reason, body);
        return { kind: 'rejected', detail: detailOf(body), reason, ...(correction ? { correction } : {}) };
      }
      if (status === 404) return { kind: 'gone' };
      if (status === 409) return { kind: 'conflict', detail: detailOf(body) };
      throw unexpected(label, answer);
    },

    async reportGateCounts(report) {
      const label = 'POST /v1/site/gate-counts';
      const answer = await call('POST', '/v1/site/gate-counts', report, options.timeoutMs, label);
      if (answer.status !== 204) throw unexpected(label, answer);
    },

    async siwx(request) {
      const label = 'POST /v1/access-tokens/siwx';
      const answer = await call('POST', '/v1/access-tokens/siwx', request, options.timeoutMs, label);
      const { status, body } = answer;
      if (status === 200 && typeof body?.access_token === 'string') return body as unknown as SiwxAccess;
      // The proof's fault (malformed, not ours, not the payer, no live payment, replayed): not the API's.
      if (status === 400 || status === 401 || status === 402 || status === 409 || status === 422) return null;
      throw unexpected(label, answer);
    },
  };
}

function isSiteOffer(body: Record<string, unknown> | undefined): body is Record<string, unknown> & SiteOffer {
  return (
    typeof body?.site_id === 'string' &&
    typeof body.domain === 'string' &&
    typeof body.default_price_usd === 'string' &&
    Array.isArray(body.rules) &&
    Number.isSafeInteger(body.chain_id) &&
    typeof body.asset === 'string' &&
    typeof body.api_base_url === 'string' &&
    Number.isSafeInteger(body.gate_ttl_seconds)
  );
}

/** The channel state of x402's corrective 402, passed on as the API states it (the client checks the voucher against its own key). */
function correctionOf(reason: string, body: Record<string, unknown> | undefined): ChannelCorrection | undefined {
  const state = body?.channel_state as ChannelStateView | undefined;
  if (
    typeof state !== 'object' ||
    state === null ||
    typeof state.chargedCumulativeAmount !== 'string' ||
    typeof state.channelId !== 'string'
  )
    return undefined;
  const voucher = body?.voucher_state as VoucherStateView | undefined;
  const voucherState =
    typeof voucher?.signedMaxClaimable === 'string' && typeof voucher.signature === 'string' ? voucher : undefined;
  return { reason, channelState: state, ...(voucherState ? { voucherState } : {}) };
}

function detailOf(body: Record<string, unknown> | undefined): string {
  return typeof body?.detail === 'string' ? body.detail : 'no detail';
}

function retryAfter(headers: Headers): number {
  const seconds = Number(headers.get('retry-after'));
  return Number.isSafeInteger(seconds) && seconds > 0 ? seconds : 5;
}

function unexpected(label: string, answer: Answer): CrawlgateApiError {
  // The API's details are about the request (bad token, no payout address), never secrets.
  const detail = typeof answer.body?.detail === 'string' ? `: ${answer.body.detail.slice(0, 200)}` : '';
  return new CrawlgateApiError(`${label}: unexpected HTTP ${answer.status}${detail}`, answer.status);
}

function describeFetchError(error: unknown, timeoutMs: number): string {
  // Duck-typed, not instanceof: fetch's errors may come from another realm (a test VM, a bundler's polyfill).
  const { name, message, cause } = (error ?? {}) as {
    name?: unknown;
    message?: unknown;
    cause?: { code?: unknown; message?: unknown };
  };
  if (name === 'TimeoutError' || name === 'AbortError') return `no answer within ${timeoutMs} ms`;
  if (typeof cause?.code === 'string') return `unreachable (${cause.code})`;
  const why = [message, cause?.message].filter((part) => typeof part === 'string').join(': ');
  return `unreachable (${why || String(error)})`;
}
