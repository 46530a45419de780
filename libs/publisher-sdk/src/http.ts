import { BodyTooLargeError, cappedText, isLoopbackHost, parseRetryAfter } from '@crawlgate/core';
import { ApiError, TimeoutError } from './errors';
import { retryDelay, sleep, type Failure, type RetryPolicy } from './retry';
import type { ValidationItem } from './types';

/** The most of an answer read: far above any the API sends (a year's CSV export included), so a server streaming without end stops here. */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface Transport {
  /** Base URL ending in /v1, no trailing slash. */
  baseUrl: string;
  timeoutMs: number;
  retry: RetryPolicy;
  fetch: FetchLike;
}

export interface Call {
  method: Method;
  /** Below /v1, e.g. `/sites/…/pricing`; path parameters already encoded. */
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  /** For an answer that is not JSON (CSV): the media type asked for; the body comes back as sent. Errors are still read as JSON. */
  acceptText?: string;
  /** Fields a success must hold, each with its check: a key or secret this call issues, shown once and kept. */
  issues?: Record<string, (value: unknown) => boolean>;
}

type Attempt = { ok: true; body: unknown } | { ok: false; error: ApiError; failure?: Failure };

/** `https://api.example.com`, `…/` and `…/v1` all mean the same API. */
export function apiBaseUrl(apiUrl: string): string {
  let url: URL;
  try {
    url = new URL(apiUrl);
  } catch {
    throw new TypeError(`apiUrl must be an absolute http(s) URL, got ${JSON.stringify(apiUrl)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TypeError(`apiUrl must use http or https, got ${url.protocol}`);
  const path = url.pathname.replace(/\/+$/, '').replace(/\/v1$/, '');
  return `${url.origin}${path}/v1`;
}

/** Throws TypeError for a base URL that is plain http off loopback: a network between reads the password and the key. */
export function refusePlainHttp(baseUrl: string): void {
  const url = new URL(baseUrl);
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname))
    throw new TypeError(
      `apiUrl ${url.origin} is plain http: the password and the API key would cross the network in clear. Use https, or set allowPlainHttp on a network you trust`,
    );
}

/** One API call, retried per the transport's policy; resolves to the parsed JSON body or throws ApiError. */
export async function send<T>(transport: Transport, call: Call): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const result = await attemptOnce(transport, call);
    if (result.ok) return result.body as T;
    const delay = result.failure ? retryDelay(transport.retry, result.failure, call.method, attempt) : null;
    if (delay === null) throw result.error;
    await sleep(delay);
  }
}

async function attemptOnce(transport: Transport, call: Call): Promise<Attempt> {
  const hasBody = call.body !== undefined;
  const signal = AbortSignal.timeout(transport.timeoutMs);
  let response: Response;
  let text: string;
  try {
    response = await transport.fetch(urlFor(transport.baseUrl, call), {
      method: call.method,
      // No content-type without a body: the API answers an empty JSON body with 400.
      headers: {
        accept: call.acceptText ?? 'application/json',
        ...(hasBody ? { 'content-type': 'application/json' } : {}),
        ...call.headers,
      },
      body: hasBody ? JSON.stringify(call.body) : undefined,
      // The API never redirects; followed, a redirect would carry the API key to another host.
      redirect: 'manual',
      signal,
    });
    text = await cappedText(response, MAX_ANSWER_BYTES, "the API's answer");
  } catch (error) {
    // Not retried: the same server would send as much again.
    if (error instanceof BodyTooLargeError)
      throw new ApiError({ status: 0, detail: `${error.message}: ${call.method} ${call.path}`, cause: error });
    if (signal.aborted) {
      throw new TimeoutError({
        status: 0,
        detail: `No answer within ${transport.timeoutMs} ms: ${call.method} ${call.path}`,
        cause: error,
      });
    }
    return {
      ok: false,
      error: new ApiError({
        status: 0,
        detail: `Could not reach ${transport.baseUrl}: ${reason(error)}`,
        cause: error,
      }),
      failure: { kind: 'network' },
    };
  }

  const body = parseBody(text);
  if (response.ok) {
    if (call.acceptText) return { ok: true, body: text };
    // A captive portal's page or a proxy's `{}` is no success: a key it "issued" would replace the one that works.
    const problem = answerProblem(call, text, body, response.status);
    if (problem === undefined) return { ok: true, body };
    throw new ApiError({
      status: response.status,
      detail: `The answer to ${call.method} ${call.path} is not the Crawlgate API’s (${problem}): is ${transport.baseUrl} the API?`,
    });
  }
  const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
  const error = new ApiError({
    status: response.status,
    detail: detailOf(body, response, transport.baseUrl),
    retryAfter,
    body,
  });
  return {
    ok: false,
    error,
    failure: response.status === 429 ? { kind: 'rate-limited', retryAfterSeconds: retryAfter } : undefined,
  };
}

function urlFor(baseUrl: string, call: Call): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(call.query ?? {})) if (value !== undefined) query.set(name, String(value));
  const search = query.toString();
  return `${baseUrl}${call.path}${search ? `?${search}` : ''}`;
}

/** What is wrong with a success's body, if anything: the API answers every call with a JSON object, but a 204. */
function answerProblem(call: Call, text: string, body: unknown, status: number): string | undefined {
  if (text === '' && status === 204 && call.issues === undefined) return undefined;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'not a JSON object';
  for (const [name, isValid] of Object.entries(call.issues ?? {}))
    if (!isValid((body as Record<string, unknown>)[name])) return `no valid ${name}`;
  return undefined;
}

function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The API's `detail`, or a stand-in when something else (a proxy, say) answered. */
function detailOf(body: unknown, response: Response, baseUrl: string): string | ValidationItem[] {
  const detail = (body as { detail?: unknown } | undefined)?.detail;
  if (typeof detail === 'string' || (Array.isArray(detail) && detail.every(isValidationItem))) return detail;
  const status = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
  const location = response.headers.get('location');
  if (response.status >= 300 && response.status < 400 && location)
    return `${status} to ${location.slice(0, 200)}: the API never redirects; is ${baseUrl} the API?`;
  return status;
}

/** An item of a 422's `detail` as the API writes it: anything else in a list is a proxy's, or a hostile API's. */
function isValidationItem(item: unknown): item is ValidationItem {
  const { loc, msg } = (item ?? {}) as { loc?: unknown; msg?: unknown };
  return typeof item === 'object' && Array.isArray(loc) && typeof msg === 'string';
}

/** Node's fetch says only "fetch failed"; the useful part (ECONNREFUSED, ENOTFOUND) is in its cause. */
function reason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } })?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
}
