import { encodeBase64Json, type PaymentRequirementsV2 } from '@crawlgate/core';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent as Dispatcher, fetch as undiciFetch } from 'undici';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createAgent, createMemoryBudgetStore, PaymentFailedError } from '../../../libs/agent-sdk/src';
import { MAX_HELD_PER_DOMAIN, MAX_HELD_PER_HOST } from '../../../libs/agent-sdk/src/held-authorizations';
import { BASE_USDC } from './support/base-offers';

/*
 * A site that refuses every payment and keeps its authorization holds the agent back from paying
 * more of its pages (three at most are held per host). Those holds were also counted against the
 * host of the URL asked for: three links of an honest site redirecting to such a site stopped the
 * agent paying the honest site itself until the authorizations expired (helper-353's low finding).
 * Plain loopback servers on two hosts (127.0.0.1, 127.0.0.2); nothing is settled.
 */
describe('@crawlgate/agent: pages held for a site that refuses payments', () => {
  const offer = (payTo: string): PaymentRequirementsV2 => ({
    scheme: 'exact',
    network: 'eip155:8453',
    amount: '1000',
    asset: BASE_USDC,
    payTo,
    maxTimeoutSeconds: 60,
    extra: { name: 'USD Coin', version: '2' },
  });
  const askPayment = (response: ServerResponse, payTo: string) =>
    response
      .writeHead(402, {
        'payment-required': encodeBase64Json({ x402Version: 2, resource: { url: 'x' }, accepts: [offer(payTo)] }),
      })
      .end('{}');
  const paymentOf = (headers: IncomingHttpHeaders) => headers['payment-signature'] ?? headers['x-payment'];
  const closers: (() => void)[] = [];
  afterAll(() => closers.forEach((close) => close()));

  async function listen(
    host: string,
    handle: (url: string, headers: IncomingHttpHeaders, res: ServerResponse) => void,
  ) {
    const server = createServer((req, res) => handle(req.url!, req.headers, res));
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    closers.push(() => {
      server.closeAllConnections(); // a payment never answered would keep its socket open
      server.close();
    });
    return `http://${host}:${(server.address() as AddressInfo).port}`;
  }

  it("holds the refusing site's pages, not the pages of the site whose links led there", async () => {
    const refusedPayments: string[] = [];
    const refusing = await listen('127.0.0.2', (_url, headers, res) => {
      const payment = paymentOf(headers);
      if (typeof payment === 'string') refusedPayments.push(payment);
      askPayment(res, privateKeyToAccount(generatePrivateKey()).address);
    });
    const honestPaid: string[] = [];
    const honestPayTo = privateKeyToAccount(generatePrivateKey()).address;
    const honest = await listen('127.0.0.1', (url, headers, res) => {
      if (url.startsWith('/go/')) return void res.writeHead(302, { location: `${refusing}/x${url.slice(4)}` }).end();
      if (paymentOf(headers)) return void (honestPaid.push(url), res.writeHead(200).end('the article'));
      askPayment(res, honestPayTo);
    });
    const agent = createAgent({
      account: privateKeyToAccount(generatePrivateKey()),
      maxPriceUsd: '0.01',
      budgetUsd: '1',
      networks: ['base'],
    });
    for (const n of [1, 2, 3])
      await expect(agent.fetch(`${honest}/go/${n}`)).rejects.toBeInstanceOf(PaymentFailedError);
    expect(refusedPayments).toHaveLength(3);

    // The refusing site holds three authorizations: no fourth page of it is paid, by any link.
    await expect(agent.fetch(`${refusing}/x4`)).rejects.toMatchObject({ reason: 'payment_held' });
    await expect(agent.fetch(`${honest}/go/1`)).rejects.toMatchObject({ reason: 'payment_held' });
    expect(refusedPayments).toHaveLength(3);
    // The honest site's own pages are still paid.
    expect((await agent.fetch(`${honest}/article`)).status).toBe(200);
    expect(honestPaid).toEqual(['/article']);
  });

  it.each([
    ['in memory', false],
    ['that takes its time (a database)', true],
  ])(
    'signs no more payments for a refusing host than it may hold, however many of its pages are fetched at once, budget store %s (helper-440)',
    async (_, slow) => {
      const refused: string[] = [];
      const payTo = privateKeyToAccount(generatePrivateKey()).address;
      const site = await listen(slow ? '127.0.0.7' : '127.0.0.6', (url, headers, res) => {
        if (typeof paymentOf(headers) === 'string') refused.push(url);
        askPayment(res, payTo);
      });
      const memory = createMemoryBudgetStore();
      const later = <T>(value: Promise<T>) => new Promise<T>((resolve) => setTimeout(() => resolve(value), 5));
      const agent = createAgent({
        account: privateKeyToAccount(generatePrivateKey()),
        maxPriceUsd: '0.01',
        budgetUsd: '1',
        networks: ['base'],
        budgetStore: slow
          ? {
              ...memory,
              reserve: (micros, limit) => later(memory.reserve(micros, limit)),
              settle: (reservation, charged) => later(memory.settle(reservation, charged)),
            }
          : memory,
      });
      const outcomes = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          agent.fetch(`${site}/page-${i}`).then(
            (response) => `status ${response.status}`,
            (error: { reason?: string }) => error.reason ?? String(error),
          ),
        ),
      );
      expect(refused.length).toBeLessThanOrEqual(MAX_HELD_PER_HOST);
      expect(outcomes.filter((outcome) => outcome === 'payment_held').length).toBeGreaterThanOrEqual(
        30 - MAX_HELD_PER_HOST,
      );
    },
  );

  it('holds a site that refuses each payment of a crawl two fetches at a time, its links each the next page with a query (helper-356)', async () => {
    const LINKS = 30;
    const waiting: ServerResponse[] = [];
    const refused: string[] = [];
    let next = 1;
    const payTo = privateKeyToAccount(generatePrivateKey()).address;
    // /a_k?hop redirects to /a_{k+1}: the URL asked for has the key of the page another fetch pays (no query in it).
    const site = await listen('127.0.0.3', (url, headers, res) => {
      const [path, query] = url.split('?');
      if (typeof paymentOf(headers) === 'string') {
        refused.push(path);
        waiting[Number(path.slice('/a_'.length))] = res;
        // Refused in order, a_k's payment once a_{k+1}'s has come: the fetch asking for a_k?hop passed its checks meanwhile.
        while (waiting[next] && (waiting[next + 1] || next === LINKS)) askPayment(waiting[next++], payTo);
        // Or within 200 ms: the agent sends a_{k+1}'s only once a slot of the host is free (PaymentSlots).
        setTimeout(() => res.headersSent || askPayment(res, payTo), 200);
        return;
      }
      if (query === 'hop') return void res.writeHead(302, { location: `/a_${Number(path.slice(3)) + 1}` }).end();
      askPayment(res, payTo);
    });
    const agent = createAgent({
      account: privateKeyToAccount(generatePrivateKey()),
      maxPriceUsd: '0.01',
      budgetUsd: '1',
      networks: ['base'],
    });
    const links = Array.from({ length: LINKS }, (_, i) => `${site}/a_${i}?hop`);
    const outcomes: string[] = [];
    const worker = async () => {
      for (let link = links.shift(); link; link = links.shift()) {
        const reason = await agent.fetch(link).then(
          (response) => `status ${response.status}`,
          (error: { reason?: string }) => error.reason ?? String(error),
        );
        outcomes.push(reason);
        // Held: the payments still waiting are refused, so that no fetch waits for good.
        if (reason !== 'payment_refused')
          waiting.forEach((res, k) => {
            if (res && !res.headersSent) {
              askPayment(res, payTo);
              next = Math.max(next, k + 1);
            }
          });
      }
    };
    await Promise.all([worker(), worker()]);
    // Three pages held stop the host, the payments under way counted among them (PaymentSlots).
    expect(refused.length).toBeLessThanOrEqual(MAX_HELD_PER_HOST);
    expect(outcomes.filter((outcome) => outcome === 'payment_held').length).toBeGreaterThanOrEqual(
      LINKS - MAX_HELD_PER_HOST,
    );
  }, 30_000);

  it('holds a site that sends each link to a subdomain of its own (wildcard DNS): its domain, not each host name, is held', async () => {
    const refused: string[] = [];
    // Every name resolves to this loopback address: p1.refusing.test, p2.refusing.test, ...
    const site = await listen('127.0.0.4', (_url, headers, res) => {
      const payment = paymentOf(headers);
      if (typeof payment === 'string') refused.push(String(headers.host));
      askPayment(res, privateKeyToAccount(generatePrivateKey()).address);
    });
    const honest = await listen('127.0.0.5', (url, headers, res) => {
      if (paymentOf(headers)) return void res.writeHead(200).end('the article');
      askPayment(res, privateKeyToAccount(generatePrivateKey()).address);
    });
    const byName = new Dispatcher({
      connect: {
        lookup: (hostname, _options, callback) =>
          callback(null, [{ address: hostname.endsWith('.honest.test') ? '127.0.0.5' : '127.0.0.4', family: 4 }]),
      },
    });
    const agent = createAgent({
      account: privateKeyToAccount(generatePrivateKey()),
      maxPriceUsd: '0.01',
      budgetUsd: '1',
      networks: ['base'],
      payOverHttp: true, // loopback names other than localhost's
      fetch: ((input: string, init?: RequestInit) =>
        undiciFetch(input, { ...(init as object), dispatcher: byName })) as unknown as typeof fetch,
    });
    const port = new URL(site).port;
    const outcomes: string[] = [];
    for (let n = 1; n <= 20; n++)
      outcomes.push(
        await agent.fetch(`http://p${n}.refusing.test:${port}/article`).then(
          (response) => `status ${response.status}`,
          (error: { reason?: string }) => error.reason ?? String(error),
        ),
      );
    // Before: twenty authorizations, one per subdomain (three held per exact host name only).
    expect(new Set(refused).size).toBe(refused.length);
    expect(refused).toHaveLength(MAX_HELD_PER_DOMAIN);
    expect(outcomes.slice(MAX_HELD_PER_DOMAIN)).toEqual(Array(20 - MAX_HELD_PER_DOMAIN).fill('payment_held'));
    // Another domain's pages are still paid.
    const article = await agent.fetch(`http://www.honest.test:${new URL(honest).port}/article`);
    expect([article.status, await article.text()]).toEqual([200, 'the article']);
    await byName.close();
  }, 30_000);
});
