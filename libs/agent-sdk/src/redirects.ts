/*
 * Redirects followed by hand (redirect: "manual"). fetch itself would forward X-PAYMENT,
 * PAYMENT-SIGNATURE and X-Crawlgate-Token to whatever origin a site redirects to, and those are
 * worth money to whoever receives them: here they reach only the request they were meant for (a
 * caller's own go on within their origin).
 * A Web Bot Auth signature is made for each hop, for that hop's URL; none is ever resent.
 */

import { isLoopbackHost } from '@crawlgate/core';
import type { HopSigner } from './web-bot-auth';

/** Plain http to a host off loopback: anyone on the network between can read and change it. */
export function isPlainHttpOffLoopback(url: URL): boolean {
  return url.protocol === 'http:' && !isLoopbackHost(url.hostname);
}

/** A Web Bot Auth signature's headers: made for one request, never sent again (a caller's own too, once a redirect leaves its origin). */
const SIGNATURE_HEADERS = ['signature', 'signature-input', 'signature-agent'];

/** Dropped once a redirect leaves the origin: payments, access tokens, and what fetch drops itself. */
const CREDENTIAL_HEADERS = [
  'x-payment',
  'payment-signature',
  'x-crawlgate-token',
  'authorization',
  'cookie',
  'proxy-authorization',
  ...SIGNATURE_HEADERS,
];
/** A payment travels without the page's token: a site would serve by the token and keep the payment. */
const PAYMENT_HEADERS = new Set(['x-payment', 'payment-signature']);

/** Whether these request headers carry a payment (x402 v1's X-PAYMENT or v2's PAYMENT-SIGNATURE). */
export const carriesPayment = (headers: Record<string, string>): boolean =>
  Object.keys(headers).some((name) => PAYMENT_HEADERS.has(name.toLowerCase()));
const BODY_HEADERS = ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location'];
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Fewer than fetch's 20: a paid request has no business bouncing around. */
export const MAX_REDIRECTS = 10;

/** One request as sent, so that the next hop or a paid retry can send it again. */
export interface Hop {
  url: URL;
  method: string;
  headers: Headers;
  body: RequestInit['body'];
  redirect: NonNullable<RequestInit['redirect']>;
  /** The caller's other init fields (signal, credentials, …). */
  init: RequestInit;
}

/** The caller's request, with a Request's body read once so it can be resent. */
export async function firstHop(input: string | URL | Request, init: RequestInit = {}): Promise<Hop> {
  const request = input instanceof Request ? input : undefined;
  const { method, headers, body, redirect, ...rest } = init;
  return {
    url: new URL(request ? request.url : String(input)),
    method: method ?? request?.method ?? 'GET',
    headers: new Headers(headers ?? request?.headers),
    body: body !== undefined ? body : request?.body ? await request.clone().arrayBuffer() : null,
    redirect: redirect ?? request?.redirect ?? 'follow',
    init: { ...rest, signal: rest.signal ?? request?.signal },
  };
}

/** What a request got: the answer to the request itself, and where its redirects ended. */
export interface Followed {
  /**
   * The answer to `start` itself. When it redirected, this is still what a payment sent with it
   * bought (its settlement, its token); its body was let go.
   */
  answer: Response;
  /** The last answer, the request that got it, and the headers it was sent with. */
  response: Response;
  hop: Hop;
  sent: Headers;
  /** Whether any hop went over plain http off loopback (where a network between could have changed the answer, a redirect's included). */
  plainHttp: boolean;
}

/**
 * Sends `start` and follows its redirects. `extra` (a payment, or a token bought for `start`'s URL)
 * goes to `start` only: a redirect answering a payment is the site's answer to it, and the
 * redirect's target, same origin or not, gets neither (a payment there would be paid and not
 * served, a token opens the URL it was issued for). `bound(url)` adds headers meant for exactly
 * that URL (its access token), except to a hop that carries a payment.
 */
export async function follow(
  http: typeof fetch,
  start: Hop,
  extra: Record<string, string>,
  bound: (url: URL) => Record<string, string>,
  sign?: HopSigner,
  /** Given the answer to `start` itself before any redirect of it is followed (a paid answer's token is kept then). */
  onAnswer?: (answer: Response) => void,
): Promise<Followed> {
  let hop = start;
  let answer: Response | undefined;
  let plainHttp = false;
  for (let redirects = 0; ; redirects++) {
    plainHttp ||= isPlainHttpOffLoopback(hop.url);
    const headers = new Headers(hop.headers);
    const payment = answer ? {} : extra;
    const paying = carriesPayment(payment);
    for (const [name, value] of Object.entries({ ...(paying ? {} : bound(hop.url)), ...payment }))
      headers.set(name, value);
    // Signed last, so that a price header this hop carries is among the signed components.
    if (sign)
      for (const [name, value] of Object.entries(await sign({ method: hop.method, url: hop.url, headers })))
        headers.set(name, value);
    const response = await http(hop.url, {
      ...hop.init,
      method: hop.method,
      headers,
      body: hop.body,
      redirect: 'manual',
    });
    if (!answer) {
      answer = response;
      onAnswer?.(answer);
    }
    const location = response.headers.get('location');
    if (!REDIRECTS.has(response.status) || location === null || hop.redirect === 'manual')
      return { answer, response, hop, sent: headers, plainHttp };
    await response.body?.cancel().catch(() => undefined);
    if (hop.redirect === 'error')
      throw new TypeError(`${hop.url.href} redirected, and the request has redirect: "error"`);
    if (redirects === MAX_REDIRECTS)
      throw new TypeError(`${start.url.href} redirected more than ${MAX_REDIRECTS} times`);
    const next = new URL(location, hop.url);
    // fetch follows redirects to http(s) only; a data: or file: URL would hand the caller a body no site served.
    if (next.protocol !== 'http:' && next.protocol !== 'https:')
      throw new TypeError(`${hop.url.href} redirected to a ${next.protocol} URL, which is not http(s)`);
    hop = redirected(hop, next, response.status);
  }
}

/** The request a redirect asks for, as fetch would make it. */
function redirected(hop: Hop, url: URL, status: number): Hop {
  const headers = new Headers(hop.headers);
  if (url.origin !== hop.url.origin) for (const name of CREDENTIAL_HEADERS) headers.delete(name);
  const toGet =
    (status === 303 && hop.method !== 'GET' && hop.method !== 'HEAD') ||
    ((status === 301 || status === 302) && hop.method === 'POST');
  if (!toGet) return { ...hop, url, headers };
  for (const name of BODY_HEADERS) headers.delete(name);
  return { ...hop, url, headers, method: 'GET', body: null };
}
