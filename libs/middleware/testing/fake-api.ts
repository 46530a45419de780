/*
 * A Crawlgate API in memory, behind a `fetch` function, for unit tests of the gate's branches
 * that the real API only reaches through timing or faults (pending settlements, 5xx, timeouts).
 * Its well-formed answers are core's types of them, so they follow the API's contract.
 */

import { encodeBase64Json, type PaidGate, type PendingPayment, type SiteOffer } from '@crawlgate/core';
import type { CrawlgateRequest } from '../src/crawlgate';

export interface FakeAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface FakeApiOptions {
  /** Answers to verify calls; default a paid answer for `paidUrl`. */
  verify?: (gateId: string, payment: unknown) => FakeAnswer;
}

export const FAKE_API_URL = 'https://api.test';
export const FAKE_SITE_ID = '11111111-1111-4111-8111-111111111111';
export const FAKE_ASSET = '0x0000000000000000000000000000000000000001';
export const FAKE_PAY_TO = '0x0000000000000000000000000000000000000002';

export function fakeApi(options: FakeApiOptions = {}) {
  const calls: string[] = [];
  const reports: unknown[] = [];
  let site = siteOffer();
  let answer: ((call: string, body: any) => FakeAnswer | undefined | Promise<FakeAnswer | undefined>) | undefined;

  const fetch = (async (input: string | URL | Request, init: RequestInit = {}) => {
    const { pathname } = new URL(String(input));
    const call = `${init.method ?? 'GET'} ${pathname}`;
    calls.push(call);
    const body = init.body ? JSON.parse(String(init.body)) : undefined;
    const result = await abortable(
      Promise.resolve().then(async () => (await answer?.(call, body)) ?? route(call, body)),
      init.signal,
    );
    return new Response(result.body === undefined ? null : JSON.stringify(result.body), {
      status: result.status,
      headers: result.headers,
    });
  }) as typeof globalThis.fetch;

  function route(call: string, body: any): FakeAnswer {
    if (call === 'GET /v1/site') return { status: 200, body: site };
    if (call === 'POST /v1/site/gate-counts') {
      reports.push(body);
      return { status: 204 };
    }
    const verify = /^POST \/v1\/gates\/([^/]+)\/verify$/.exec(call);
    if (verify) return options.verify?.(decodeURIComponent(verify[1]), body.payment) ?? { status: 500 };
    return { status: 404, body: { detail: 'Not found' } };
  }

  return {
    fetch,
    calls,
    reports,
    /** Replaces what GET /v1/site answers from now on. */
    setSite(changes: Partial<ReturnType<typeof siteOffer>>) {
      site = { ...site, ...changes, pricing_version: site.pricing_version + 1 };
    },
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

export function paid(gateId: string, accessToken: string, url = '/'): FakeAnswer {
  return {
    status: 200,
    body: {
      status: 'paid',
      access_token: accessToken,
      expires_at: new Date().toISOString(),
      gate_id: gateId,
      url,
      tx_hash: '0xabc',
      payer: '0xpayer',
      amount: '10000',
      price_usd: '0.01',
      network: 'local',
    } satisfies PaidGate,
  };
}

/** The API's 202: the payment of `gateId` is on its way to the chain. */
export function pending(gateId: string, txHash: string | null = '0xabc'): FakeAnswer {
  return {
    status: 202,
    body: {
      status: 'settlement_pending',
      gate_id: gateId,
      tx_hash: txHash,
      detail: 'Ask again with the same proof.',
    } satisfies PendingPayment,
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
    asset: FAKE_ASSET,
    x402_network: 'local',
    asset_name: 'USD Coin',
    asset_version: '2',
    pay_to: FAKE_PAY_TO as string | null,
    gate_ttl_seconds: 900,
    settlement_timeout_seconds: 30,
    max_url_length: 2048,
    api_base_url: FAKE_API_URL,
    // None listed: the gate then verifies with its first configured secret only (live-secrets.ts).
    usable_secrets: undefined as SiteOffer['usable_secrets'],
  } satisfies SiteOffer;
}

/** An EIP-3009 payload well formed enough for the gate's parsing (the fake API checks no signature). */
export const FAKE_EXACT_PAYLOAD = {
  signature: '0x' + 'ab'.repeat(65),
  authorization: {
    from: '0x' + '3'.repeat(40),
    to: '0x' + '2'.repeat(40),
    value: '10000',
    validAfter: '0',
    validBefore: '9999999999',
    nonce: '0x' + '1'.repeat(64),
  },
};

/** A well-formed x402 v1 X-PAYMENT header: it cannot name its gate. */
export const fakePaymentV1 = () =>
  encodeBase64Json({ x402Version: 1, scheme: 'exact', network: 'local', payload: FAKE_EXACT_PAYLOAD });

/** A GET the gate is asked about, from one client address. */
export const gateRequest = (url: string, headers: CrawlgateRequest['headers'], ip = '10.0.0.1'): CrawlgateRequest => ({
  method: 'GET',
  url,
  headers,
  ip,
});
