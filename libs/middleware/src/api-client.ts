/*
 * The three Crawlgate API calls the middleware makes, over global fetch with a timeout each.
 * Every answer the gate can act on comes back as a value; anything else (unreachable, timed out,
 * 5xx, a status or body it cannot use) is a CrawlgateApiError, which the failMode decides about.
 * Error messages name the call and the cause, never the site token or the API URL (which may
 * carry credentials).
 */

import type { GateOffer, PaidGate, SiteOffer } from '@crawlgate/core';

export type { GateOffer, PaidGate, SiteOffer };

export type GateAnswer =
  | { kind: 'free' }
  /** `paymentRequired`: the API's PAYMENT-REQUIRED header (x402 v2), base64 JSON. */
  | { kind: 'priced'; offer: GateOffer; paymentRequired: string | undefined };


export type VerifyAnswer =
  | { kind: 'paid'; paid: PaidGate }
  /** 202: sent to the chain, not confirmed yet; the same proof again gets the final answer. */
  | { kind: 'pending'; retryAfterSeconds: number }
  /** 402: the proof does not pay this gate; `reason` is an x402 reason code. */
  | { kind: 'rejected'; detail: string; reason: string }
  /** 404: the gate expired (or never existed). */
  | { kind: 'gone' }
  /** 409: the proof paid another gate, or another proof paid (or is paying) this one. */
  | { kind: 'conflict'; detail: string };

export interface ApiClientOptions {
  apiUrl: string;
  siteToken: string;
  timeoutMs: number;
  /** verify waits for the settlement on chain, so it gets longer than the other calls. */
  verifyTimeoutMs: number;
  fetch?: typeof fetch;
}

export interface ApiClient {
  site(): Promise<SiteOffer>;
  createGate(url: string): Promise<GateAnswer>;
  verify(gateId: string, payment: Record<string, unknown>): Promise<VerifyAnswer>;
}

export class CrawlgateApiError extends Error {
  override name = 'CrawlgateApiError';
}

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown> | undefined;
}

export function createApiClient(options: ApiClientOptions): ApiClient {
  const base = options.apiUrl.replace(/\/+$/, '');
  const doFetch = options.fetch ?? globalThis.fetch;

  async function call(method: 'GET' | 'POST', path: string, body: unknown, timeoutMs: number, label: string): Promise<Answer> {
    let response: Response;
    let text: string;
    try {
      response = await doFetch(base + path, {
        method,
        headers: { 'x-site-token': options.siteToken, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
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
    const record = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
    return { status: response.status, headers: response.headers, body: record };
  }

  return {
    async site() {
      const label = 'GET /v1/site';
      const answer = await call('GET', '/v1/site', undefined, options.timeoutMs, label);
      if (answer.status === 200 && typeof answer.body?.site_id === 'string') return answer.body as unknown as SiteOffer;
      throw unexpected(label, answer);
    },

    async createGate(url) {
      const label = 'POST /v1/gates';
      const answer = await call('POST', '/v1/gates', { url }, options.timeoutMs, label);
      if (answer.status === 200 && answer.body?.status === 'free') return { kind: 'free' };
      if (answer.status === 402 && isGateOffer(answer.body)) {
        return { kind: 'priced', offer: answer.body, paymentRequired: answer.headers.get('payment-required') ?? undefined };
      }
      throw unexpected(label, answer);
    },

    async verify(gateId, payment) {
      const label = 'POST /v1/gates/{id}/verify';
      const answer = await call('POST', `/v1/gates/${encodeURIComponent(gateId)}/verify`, { payment }, options.verifyTimeoutMs, label);
      const { status, body } = answer;
      if (status === 200 && typeof body?.access_token === 'string') return { kind: 'paid', paid: body as unknown as PaidGate };
      if (status === 202) return { kind: 'pending', retryAfterSeconds: retryAfter(answer.headers) };
      if (status === 402) return { kind: 'rejected', detail: detailOf(body), reason: typeof body?.reason === 'string' ? body.reason : 'invalid_payload' };
      if (status === 404) return { kind: 'gone' };
      if (status === 409) return { kind: 'conflict', detail: detailOf(body) };
      throw unexpected(label, answer);
    },
  };
}

function isGateOffer(body: Record<string, unknown> | undefined): body is Record<string, unknown> & GateOffer {
  return (
    typeof body?.id === 'string' &&
    typeof body.price_usd === 'string' &&
    typeof body.url === 'string' &&
    !Number.isNaN(Date.parse(String(body.expires_at))) &&
    Array.isArray(body.accepts)
  );
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
  return new CrawlgateApiError(`${label}: unexpected HTTP ${answer.status}${detail}`);
}

function describeFetchError(error: unknown, timeoutMs: number): string {
  // Duck-typed, not instanceof: fetch's errors may come from another realm (a test VM, a bundler's polyfill).
  const { name, message, cause } = (error ?? {}) as { name?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } };
  if (name === 'TimeoutError' || name === 'AbortError') return `no answer within ${timeoutMs} ms`;
  if (typeof cause?.code === 'string') return `unreachable (${cause.code})`;
  const why = [message, cause?.message].filter((part) => typeof part === 'string').join(': ');
  return `unreachable (${why || String(error)})`;
}
