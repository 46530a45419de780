/*
 * A Crawlgate API in memory, behind a `fetch` function, for unit tests of the gate's branches
 * that the real API only reaches through timing or faults (pending settlements, 5xx, timeouts).
 */

import { encodeBase64Json } from '@crawlgate/core';

export interface FakeAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface FakeApiOptions {
  /** Price of every path except those starting with /free; default "0.01". */
  price?: string;
  /** Gate lifetime; default 15 minutes. */
  gateTtlMs?: number;
  /** Answers to verify calls, in order; default a paid answer. */
  verify?: (gateId: string, payment: unknown) => FakeAnswer;
}

export const FAKE_API_URL = 'https://api.test';
export const FAKE_SITE_ID = '11111111-1111-4111-8111-111111111111';

export function fakeApi(options: FakeApiOptions = {}) {
  const calls: string[] = [];
  let gates = 0;
  let answer: ((call: string, body: any) => FakeAnswer | undefined | Promise<FakeAnswer | undefined>) | undefined;

  const fetch = (async (input: string | URL | Request, init: RequestInit = {}) => {
    const { pathname } = new URL(String(input));
    const call = `${init.method ?? 'GET'} ${pathname}`;
    calls.push(call);
    const body = init.body ? JSON.parse(String(init.body)) : undefined;
    const result = await abortable(Promise.resolve().then(async () => (await answer?.(call, body)) ?? route(call, body)), init.signal);
    return new Response(result.body === undefined ? null : JSON.stringify(result.body), { status: result.status, headers: result.headers });
  }) as typeof globalThis.fetch;

  function route(call: string, body: any): FakeAnswer {
    if (call === 'GET /v1/site') return { status: 200, body: siteOffer() };
    if (call === 'POST /v1/gates') {
      if (String(body.url).startsWith('/free')) return { status: 200, body: { status: 'free', price_usd: '0', url: body.url } };
      gates++;
      return { status: 402, body: gateOffer(`gate-${gates}`, body.url), headers: { 'payment-required': encodeBase64Json({ x402Version: 2, gate: gates }) } };
    }
    const verify = /^POST \/v1\/gates\/([^/]+)\/verify$/.exec(call);
    if (verify) return options.verify?.(verify[1], body.payment) ?? paid(verify[1]);
    return { status: 404, body: { detail: 'Not found' } };
  }

  function gateOffer(id: string, url: string) {
    return {
      id,
      site_id: FAKE_SITE_ID,
      url,
      status: 'open',
      price_usd: options.price ?? '0.01',
      amount: '10000',
      asset: '0x0000000000000000000000000000000000000001',
      network: 'local',
      chain_id: 31337,
      pay_to: '0x0000000000000000000000000000000000000002',
      expires_at: new Date(Date.now() + (options.gateTtlMs ?? 15 * 60_000)).toISOString(),
      verify_url: `${FAKE_API_URL}/v1/gates/${id}/verify`,
      x402Version: 1,
      error: 'Payment required',
      accepts: [],
    };
  }

  return {
    fetch,
    calls,
    /** Overrides every answer while set (return undefined to fall through to the normal routes). */
    answerWith(fn: typeof answer) {
      answer = fn;
    },
    count: (prefix: string) => calls.filter((c) => c.startsWith(prefix)).length,
  };
}

/** Rejects as fetch does when the signal aborts (timeouts), whatever the answer is doing. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | null | undefined): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    promise.then(resolve, reject);
  });
}

export function paid(gateId: string, accessToken = 'token-of-' + gateId): FakeAnswer {
  return {
    status: 200,
    body: { status: 'paid', access_token: accessToken, expires_at: new Date().toISOString(), gate_id: gateId, url: '/', tx_hash: '0xabc', payer: '0xpayer', amount: '10000', price_usd: '0.01', network: 'local' },
  };
}

function siteOffer() {
  return {
    site_id: FAKE_SITE_ID,
    domain: 'example.com',
    default_price_usd: '0.01',
    rules: [{ path: '/free/*', price_usd: '0' }],
    pricing_version: 1,
    network: 'local',
    caip2: 'eip155:31337',
    chain_id: 31337,
    asset: '0x0000000000000000000000000000000000000001',
    pay_to: '0x0000000000000000000000000000000000000002',
  };
}
