/*
 * Quotes against a stub site (the real middleware is in test/mcp-server.spec.ts): which source
 * answers when, and how a quote stands against the limits.
 */

import { encodeBase64Json, NETWORKS } from '@crawlgate/core';
import { readConfig } from './config';
import { MAX_OFFERS_LISTED, quotePrice } from './quote';
import { refusalOf } from './refusals';
import { createWalletSession } from './session';

const ASSET = '0x036CbD53842c5426634e7929541eC2318f3dCF7e'; // USDC on Base Sepolia
const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const DOMAIN = { name: NETWORKS['base-sepolia'].usdc.name, version: NETWORKS['base-sepolia'].usdc.version };
const ENV = {
  CRAWLGATE_WALLET_KEY: `0x${'1'.repeat(64)}`,
  CRAWLGATE_MAX_PRICE_USD: '0.005',
  CRAWLGATE_BUDGET_USD: '0.02',
  CRAWLGATE_NETWORKS: 'base-sepolia',
};
const PAY_JSON = {
  version: 1,
  default_price_usd: '0.003',
  rules: [],
  payment: { network: 'base-sepolia', asset: ASSET, pay_to: PAY_TO },
  free_paths: ['/robots.txt'],
};
const v2 = (amount: string, network = 'eip155:84532') =>
  encodeBase64Json({
    x402Version: 2,
    resource: { url: 'x' },
    accepts: [{ scheme: 'exact', network, amount, asset: ASSET, payTo: PAY_TO, maxTimeoutSeconds: 60, extra: DOMAIN }],
  });

/** A session whose requests go to `site`, which records what it was asked. */
function sessionFor(site: (url: string) => Response) {
  const asked: { url: string; userAgent: string | null }[] = [];
  const fetch = (async (input: string | URL, init?: RequestInit) => {
    asked.push({ url: String(input), userAgent: new Headers(init?.headers).get('user-agent') });
    return site(String(input));
  }) as typeof globalThis.fetch;
  return { session: createWalletSession(readConfig(ENV), { fetch }), asked };
}

describe('quotePrice', () => {
  it('names the page that answered after a redirect, not the one asked for: the price and payee are its site’s', async () => {
    // Named by the URL asked for, a trusted page redirecting to another site lent it its trust.
    const { session } = sessionFor(() => {
      const answer = new Response('{}', { status: 402, headers: { 'payment-required': v2('10000') } });
      Object.defineProperty(answer, 'url', { value: 'https://elsewhere.example/paid' });
      return answer;
    });
    expect(await quotePrice(session, new URL('https://trusted.example/free'), 'page')).toMatchObject({
      url: 'https://elsewhere.example/paid',
      price_usd: '0.01',
    });
  });

  it('prices a page by its 402, asking as fetch_page does, and says how it stands against the limits', async () => {
    const { session, asked } = sessionFor(
      () => new Response('{}', { status: 402, headers: { 'payment-required': v2('10000') } }),
    );
    expect(await quotePrice(session, new URL('https://a.example/p'), 'page')).toEqual({
      url: 'https://a.example/p',
      source: 'page',
      status: 402,
      free: false,
      price_usd: '0.01',
      pay_to: PAY_TO,
      offers: [
        { x402_version: 2, network: 'eip155:84532', asset: ASSET, pay_to: PAY_TO, amount: '10000', price_usd: '0.01' },
      ],
      offers_total: 1,
      within_max_price: false,
      within_budget: true,
      network_allowed: true,
      max_price_usd: '0.005',
      remaining_usd: '0.02',
    });
    expect(asked).toEqual([{ url: 'https://a.example/p', userAgent: session.headers['user-agent'] }]);
  });

  it('prices by the offer the agent may pay when the first is on another network', async () => {
    const header = encodeBase64Json({
      accepts: [
        { scheme: 'exact', network: 'eip155:8453', amount: '1', asset: ASSET, payTo: PAY_TO, extra: DOMAIN },
        { scheme: 'exact', network: 'eip155:84532', amount: '3000', asset: ASSET, payTo: PAY_TO, extra: DOMAIN },
      ],
    });
    const { session } = sessionFor(() => new Response(null, { status: 402, headers: { 'payment-required': header } }));
    expect(await quotePrice(session, new URL('https://a.example/p'), 'page')).toMatchObject({
      price_usd: '0.003',
      within_max_price: true,
      network_allowed: true,
      offers: [{ amount: '3000' }, { amount: '1' }],
    });
  });

  it('lists at most MAX_OFFERS_LISTED offers, the one priced first, and counts them all', async () => {
    const other = { scheme: 'exact', network: 'eip155:8453', amount: '1', asset: ASSET, payTo: PAY_TO, extra: DOMAIN };
    const payable = { ...other, network: 'eip155:84532', amount: '3000' };
    const header = encodeBase64Json({ accepts: [...Array(2000).fill(other), payable] });
    const { session } = sessionFor(() => new Response(null, { status: 402, headers: { 'payment-required': header } }));
    const quote = await quotePrice(session, new URL('https://a.example/p'), 'page');
    expect(quote).toMatchObject({ price_usd: '0.003', offers_total: 2001, network_allowed: true });
    expect(quote.offers).toHaveLength(MAX_OFFERS_LISTED);
    expect(quote.offers[0]).toMatchObject({ amount: '3000' });
  });

  it('calls a page that answers without asking for payment free, whatever its status', async () => {
    for (const status of [200, 301, 403, 404]) {
      const { session, asked } = sessionFor(() => new Response('x', { status }));
      expect(await quotePrice(session, new URL('https://a.example/p'), 'page')).toMatchObject({
        source: 'page',
        status,
        free: true,
        price_usd: '0',
        offers: [],
        within_budget: true,
        network_allowed: true,
      });
      expect(asked).toHaveLength(1);
    }
  });

  it("falls back to pay.json when the page's 402 names no price it can read, or the page fails", async () => {
    for (const status of [402, 503]) {
      const { session, asked } = sessionFor((url) =>
        url.endsWith('/.well-known/pay.json') ? Response.json(PAY_JSON) : new Response('no price here', { status }),
      );
      expect(await quotePrice(session, new URL('https://a.example/p'), 'page')).toMatchObject({
        source: 'pay.json',
        status,
        price_usd: '0.003',
        offers: [{ x402_version: null, amount: '3000' }],
      });
      expect(asked.map((request) => request.url)).toEqual([
        'https://a.example/p',
        'https://a.example/.well-known/pay.json',
      ]);
    }
  });

  it('reads only pay.json when asked to', async () => {
    const { session, asked } = sessionFor(() => Response.json(PAY_JSON));
    expect(await quotePrice(session, new URL('https://a.example/robots.txt'), 'pay.json')).toMatchObject({
      source: 'pay.json',
      status: null,
      free: true,
      price_usd: '0',
    });
    expect(asked.map((request) => request.url)).toEqual(['https://a.example/.well-known/pay.json']);
  });

  it('says no_price when neither the page nor pay.json names one', async () => {
    const cases: [(url: string) => Response, RegExp][] = [
      [() => new Response('nope', { status: 404 }), /pay\.json answered 404/],
      [
        () => new Response('<html>', { status: 200, headers: { 'content-type': 'text/html' } }),
        /pay\.json: Unexpected token/,
      ],
      [() => Response.json({ version: 2 }), /not a version 1 document/],
      [() => new Response(new Uint8Array([1]), { headers: { 'content-type': 'image/png' } }), /not a JSON document/],
    ];
    for (const [site, message] of cases) {
      const { session } = sessionFor(site);
      const refusal = await quotePrice(session, new URL('https://a.example/p'), 'pay.json').catch(refusalOf);
      expect(refusal).toMatchObject({ code: 'no_price', message });
    }
    const { session } = sessionFor((url) =>
      url.endsWith('pay.json') ? new Response('', { status: 404 }) : new Response('', { status: 402 }),
    );
    expect(await quotePrice(session, new URL('https://a.example/p'), 'page').catch(refusalOf)).toMatchObject({
      code: 'no_price',
      status: 402,
      message: expect.stringContaining('the page answered 402'),
    });
  });
});
