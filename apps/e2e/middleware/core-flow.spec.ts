/*
 * The gate's payment flow against the real API and chain, at the level of createCrawlgate().handle():
 * what moves on chain, what is stored, and which calls reach the API.
 */

import {
  decodeBase64Json,
  encodeBase64Json,
  exactPaymentV2,
  type CrawlerView,
  type PaymentRequiredV2,
} from '@crawlgate/core';
import { signOffer, transfersTo, newWallet } from '../../../apps/api/test/test-agent';
import { createCrawlgate, type CrawlgateOptions } from '../../../libs/middleware/src/crawlgate';
import type { Decision } from '../../../libs/middleware/src/decision';
import { AHREFSBOT, BROWSER, GPTBOT, startGatedSite, type GatedSite } from './support/gated-site';

let site: GatedSite;
beforeAll(async () => {
  site = await startGatedSite();
}, 60_000);
afterAll(() => site?.close());

function gate(overrides: Partial<CrawlgateOptions> = {}) {
  const apiCalls: string[] = [];
  const countingFetch: typeof fetch = (input, init) => {
    apiCalls.push(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname}`);
    return fetch(input, init);
  };
  const crawlgate = createCrawlgate(site.options({ fetch: countingFetch, ...overrides }));
  opened.push(crawlgate);
  const handle = (url: string, headers: Record<string, string> = {}) =>
    crawlgate.handle({ method: 'GET', url, headers: { 'user-agent': GPTBOT, ...headers }, ip: '127.0.0.1' });
  return { handle, apiCalls, crawlgate };
}

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((crawlgate) => crawlgate.close()));
});

function response(decision: Decision) {
  if (decision.kind !== 'respond') throw new Error(`expected a response, got ${decision.kind}`);
  return { ...decision, json: JSON.parse(decision.body) };
}

function paidHeaders(decision: Decision): Record<string, string> {
  if (decision.kind !== 'pass-after-payment')
    throw new Error(`expected pass-after-payment, got ${JSON.stringify(decision)}`);
  return decision.headers;
}

it('settles an X-PAYMENT once on chain; the same header again, which cannot name its gate, is refused without a second transfer', async () => {
  const { handle } = gate();
  const offer = response(await handle('/articles/x-payment'));
  const xPayment = await site.xPayment(offer.json);

  const headers = paidHeaders(await handle('/articles/x-payment', { 'x-payment': xPayment }));
  const settlement = decodeBase64Json(headers['x-payment-response']) as { transaction: string };
  expect(settlement).toMatchObject({
    success: true,
    network: offer.json.accepts[0].network,
    payer: site.agent.address.toLowerCase(),
  });
  expect(headers['crawler-charged']).toBe('USD 0.01');
  expect(await transfersTo(site.app, site.payTo)).toEqual([
    { from: site.agent.address, value: 10_000n, hash: settlement.transaction },
  ]);

  // Anyone can rebuild a v1 X-PAYMENT from the chain's calldata: replayed, it opens nothing.
  const replay = response(await handle('/articles/x-payment', { 'x-payment': xPayment }));
  expect(replay.status).toBe(402);
  expect(decodeBase64Json(replay.headers['x-payment-response'])).toMatchObject({
    success: false,
    errorReason: 'duplicate_settlement',
  });
  expect(await transfersTo(site.app, site.payTo)).toHaveLength(1);
  expect(await handle('/articles/x-payment', { 'x-crawlgate-token': headers['x-crawlgate-token'] })).toEqual({
    kind: 'pass',
  });
});

it('settles an x402 v2 PAYMENT-SIGNATURE and answers with PAYMENT-RESPONSE', async () => {
  const { handle } = gate();
  const offer = response(await handle('/cheap/v2'));
  expect(offer.headers['crawler-price']).toBe('USD 0.001');
  const required = decodeBase64Json(offer.headers['payment-required']) as PaymentRequiredV2;
  const signed = await signOffer(site.app, site.agent, offer.json);
  const signature = encodeBase64Json(
    exactPaymentV2(required.accepts[0], signed.authorization, signed.signature, { resource: required.resource }),
  );

  const headers = paidHeaders(await handle('/cheap/v2', { 'payment-signature': signature }));
  expect(headers['x-payment-response']).toBeUndefined();
  expect(decodeBase64Json(headers['payment-response'])).toMatchObject({
    success: true,
    network: required.accepts[0].network,
  });
  expect(headers['crawler-charged']).toBe('USD 0.001');
});

it('refuses a price above crawler-max-price with 402 before anything is paid', async () => {
  const { handle, apiCalls } = gate();
  const offer = response(await handle('/articles/capped'));
  const before = await transfersTo(site.app, site.payTo);
  const capped = response(
    await handle('/articles/capped', {
      'crawler-max-price': 'USD 0.005',
      'x-payment': await site.xPayment(offer.json),
    }),
  );
  expect(capped.status).toBe(402);
  expect(capped.headers['crawler-price']).toBe('USD 0.01');
  expect(capped.headers['crawler-error']).toBe('InvalidCrawlerMaxPrice');
  expect(apiCalls.filter((call) => call.endsWith('/verify'))).toEqual([]);
  expect(await transfersTo(site.app, site.payTo)).toEqual(before);
});

it('answers a payment the API rejects with 402 and the x402 reason', async () => {
  const { handle } = gate();
  const offer = response(await handle('/articles/broke'));
  const rejected = response(
    await handle('/articles/broke', { 'x-payment': await site.xPayment(offer.json, newWallet()) }),
  );
  expect(rejected.status).toBe(402);
  expect(rejected.json.url).toBe(offer.json.url);
  expect(decodeBase64Json(rejected.headers['x-payment-response'])).toMatchObject({
    success: false,
    errorReason: 'insufficient_funds',
  });
});

it('counts every 402 it answers in the site’s stats (reported in a batch), and none for a free path', async () => {
  const { handle, crawlgate, apiCalls } = gate();
  const before = await site.gateCount();
  const first = response(await handle('/articles/counted'));
  const second = response(await handle('/articles/counted?utm=x'));
  expect(second.json.id).not.toBe(first.json.id);
  expect(await handle('/free/page')).toEqual({ kind: 'pass' });
  await crawlgate.close();
  expect(apiCalls.filter((call) => call === 'POST /v1/site/gate-counts')).toHaveLength(1);
  expect(await site.gateCount()).toBe(before + 2);
  const stats = await site.app.call('GET', `/v1/sites/${site.site.siteId}/stats`, { headers: site.publisher.auth });
  expect(stats.body.gates_created).toBeGreaterThanOrEqual(2);
});

it('makes no API call for a request with a valid token', async () => {
  const { handle, apiCalls } = gate();
  const token = await site.payThroughApi(response(await gate().handle('/articles/token')).json);
  expect(await handle('/articles/token?page=2', { authorization: `Bearer ${token}` })).toEqual({ kind: 'pass' });
  // Only the start-up load of the site's terms.
  expect(apiCalls).toEqual(['GET /v1/site']);
});

it('leaves the site’s conversion right after a crawl through the middleware: paid gates ÷ gates offered', async () => {
  const { handle, crawlgate } = gate();
  const stats = async () =>
    (await site.app.call('GET', `/v1/sites/${site.site.siteId}/stats`, { headers: site.publisher.auth })).body;
  const before = await stats();
  // A crawler is offered four pages and pays for one of them.
  const offers = [];
  for (const page of ['a', 'b', 'c', 'd']) offers.push(response(await handle(`/articles/crawl-${page}`)));
  paidHeaders(await handle('/articles/crawl-a', { 'x-payment': await site.xPayment(offers[0].json) }));
  await crawlgate.close();

  const after = await stats();
  const created = before.gates_created + 4;
  const paidGates = before.paid_gates + 1;
  expect({ gates_created: after.gates_created, paid_gates: after.paid_gates, conversion: after.conversion }).toEqual({
    gates_created: created,
    paid_gates: paidGates,
    conversion: (paidGates / created).toFixed(4),
  });
});

it('reports what it did with each kind of visitor in the same batched call, and the API shows it per crawler', async () => {
  // A fresh site of its own, so the counts are only this crawl's.
  const fresh = await startGatedSite();
  try {
    const apiCalls: string[] = [];
    const countingFetch: typeof fetch = (input, init) => {
      apiCalls.push(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname}`);
      return fetch(input, init);
    };
    const crawlgate = createCrawlgate(
      fresh.options({ fetch: countingFetch, policy: { bots: { Googlebot: 'allow', AhrefsBot: 'block' } } }),
    );
    const visit = (url: string, ua: string, headers: Record<string, string> = {}) =>
      crawlgate.handle({ method: 'GET', url, headers: { 'user-agent': ua, ...headers }, ip: '127.0.0.1' });
    const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

    expect(await visit('/articles/a', BROWSER)).toEqual({ kind: 'pass' });
    expect(await visit('/articles/b', BROWSER)).toEqual({ kind: 'pass' });
    expect(await visit('/articles/a', GOOGLEBOT)).toEqual({ kind: 'pass' });
    expect(response(await visit('/articles/a', AHREFSBOT)).status).toBe(403);
    const offer = response(await visit('/articles/paid', GPTBOT));
    expect(offer.status).toBe(402);
    expect(response(await visit('/articles/other', GPTBOT)).status).toBe(402);
    const paid = paidHeaders(await visit('/articles/paid', GPTBOT, { 'x-payment': await fresh.xPayment(offer.json) }));
    expect(await visit('/articles/paid', GPTBOT, { 'x-crawlgate-token': paid['x-crawlgate-token'] })).toEqual({
      kind: 'pass',
    });
    expect(await visit('/free/page', GPTBOT)).toEqual({ kind: 'pass' });

    await crawlgate.close();
    expect(apiCalls.filter((call) => call === 'POST /v1/site/gate-counts')).toHaveLength(1);
    const answer = await fresh.app.call('GET', `/v1/sites/${fresh.site.siteId}/crawlers`, {
      headers: fresh.publisher.auth,
    });
    expect(answer.status).toBe(200);
    const byName = Object.fromEntries(
      (answer.body.crawlers as CrawlerView[]).map((crawler) => [crawler.crawler, crawler]),
    );
    expect(byName.person).toMatchObject({ category: 'person', operator: null, requests: 2, passed: 2, top_paths: [] });
    // Loopback is in the operators' ranges these tests serve (support/crawler-ranges.ts): verified.
    expect(byName.Googlebot).toMatchObject({ operator: 'Google', requests: 1, allowed: 1, verified_share: '1.0000' });
    expect(byName.AhrefsBot).toMatchObject({ requests: 1, blocked: 1 });
    // Two 402s, one paid page (0.01 USD), one token reuse, and a free page passed.
    expect(byName.GPTBot).toMatchObject({
      operator: 'OpenAI',
      requests: 5,
      charged: 2,
      paid: 1,
      token: 1,
      passed: 1,
      revenue_usd: '0.01',
      verified_share: '1.0000',
    });
    expect(byName.GPTBot.top_paths).toEqual([
      { path: '/articles/paid', requests: 3, verified: true },
      { path: '/articles/other', requests: 1, verified: true },
      { path: '/free/page', requests: 1, verified: true },
    ]);
  } finally {
    await fresh.close();
  }
});

it('keeps reporting while a crawler floods it with long wide-character paths: no report outgrows the API’s body limit', async () => {
  const fresh = await startGatedSite();
  try {
    const crawlgate = createCrawlgate(fresh.options({ policy: { bots: { Googlebot: 'allow', bingbot: 'allow' } } }));
    const visit = (url: string, ua: string) =>
      crawlgate.handle({ method: 'GET', url, headers: { 'user-agent': ua }, ip: '127.0.0.1' });
    const before = await fresh.gateCount();
    expect(response(await visit('/articles/counted', GPTBOT)).status).toBe(402);
    for (let i = 0; i < 5; i++) expect(await visit(`/articles/${i}`, BROWSER)).toEqual({ kind: 'pass' });
    // Each path is about 6 KB of JSON (2,000 three-byte characters): 50 of them were 300 KB of report.
    const bots = [
      'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
      'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)',
    ];
    for (let i = 0; i < 50; i++)
      expect(await visit(encodeURI(`/${i}` + '漢'.repeat(1990)), bots[i % 2])).toEqual({ kind: 'pass' });
    await crawlgate.close();
    expect(await fresh.gateCount()).toBe(before + 1);
    const answer = await fresh.app.call('GET', `/v1/sites/${fresh.site.siteId}/crawlers`, {
      headers: fresh.publisher.auth,
    });
    const byName = Object.fromEntries(
      (answer.body.crawlers as CrawlerView[]).map((crawler) => [crawler.crawler, crawler]),
    );
    expect(byName.person).toMatchObject({ requests: 5 });
    expect(byName.Googlebot).toMatchObject({ requests: 25, allowed: 25 });
    expect(byName.bingbot).toMatchObject({ requests: 25, allowed: 25 });
  } finally {
    await fresh.close();
  }
});

it('answers 414, not a gate, for a path no access token could carry: such a page is never sold', async () => {
  const { handle } = gate();
  // 1,050 wide characters: 3,150 bytes, past what a token may bind; 600 (1,800 bytes) fit.
  expect(response(await handle(encodeURI('/articles/' + '一'.repeat(1050)))).status).toBe(414);
  const fits = response(await handle(encodeURI('/articles/' + '一'.repeat(600))));
  expect(fits.status).toBe(402);
  // And that gate is paid for and its token issued, as any other.
  const token = await site.payThroughApi(fits.json);
  expect(await handle(encodeURI('/articles/' + '一'.repeat(600)), { 'x-crawlgate-token': token })).toEqual({
    kind: 'pass',
  });
});
