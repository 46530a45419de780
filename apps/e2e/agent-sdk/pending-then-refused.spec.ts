import { crawlgateExpress } from '@crawlgate/middleware/express';
import { devTestClient } from '@crawlgate/devchain';
import express from 'express';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fundUsdc, newWallet, transfersTo } from '../../../apps/api/test/test-agent';
import { createAgent, type PaymentEvent, type UnconfirmedPaymentEvent } from '../../../libs/agent-sdk/src';
import { startGatedSite, GPTBOT, type GatedSite } from '../middleware/support/gated-site';

/**
 * A payment the site answered "pending" (503) is on its way to the chain: whatever answers the
 * agent's resend of it next (a rate limiter's 429, a proxy's 408, the middleware's 402 for a v1
 * payment it can only send to a fresh gate, a fresh 402, a redirect), only the gate's API can say it
 * failed. The agent must not forget it and pay the page a second time while the first settles.
 * Real API (settlements held in the mempool until the test mines them), real Express middleware,
 * a proxy in front of the site that changes the resend.
 */
describe('@crawlgate/agent: a payment answered "pending", then something else', () => {
  let slow: GatedSite;
  let origin: ReturnType<ReturnType<typeof express>['listen']>;
  let originUrl: string;
  beforeAll(async () => {
    slow = await startGatedSite({
      app: { isolateChain: true, config: { chain: { settlementTimeoutMs: 500, reconcileIntervalMs: 200 } } },
    });
    const site = express();
    site.use(crawlgateExpress(slow.options()));
    site.get('/landing', (_request, response) => void response.send('the landing page'));
    site.get('/{*path}', (request, response) => void response.send(`content of ${request.path}`));
    origin = site.listen(0, '127.0.0.1');
    await new Promise((resolve) => origin.once('listening', resolve));
    originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
  }, 60_000);
  afterAll(async () => {
    await devTestClient(slow.app.chain.rpcUrl).setAutomine(true);
    await new Promise((resolve) => origin.close(resolve));
    await slow.close();
  }, 60_000);

  const paying = (request: IncomingMessage) =>
    request.headers['x-payment'] !== undefined || request.headers['payment-signature'] !== undefined;

  /**
   * A proxy to the site: `answer` may answer a request itself (true) instead of passing it on; `strip`
   * names headers removed from every answer of the site; `lose` picks paying requests whose answer
   * from the site is replaced by another once the site gave it (a 502, or what `lose` returns).
   * `resent`: the payment came a second time.
   */
  async function startProxy(
    answer: (request: IncomingMessage, response: ServerResponse, paid: number) => boolean,
    strip: string[] = [],
    lose: (paid: number) => boolean | { status: number; headers: Record<string, string>; body: string } = () => false,
  ) {
    let paid = 0;
    let onResent = () => {};
    const resent = new Promise<void>((resolve) => (onResent = resolve));
    const proxy = createServer((request, response) => {
      if (paying(request) && ++paid === 2) onResent();
      if (answer(request, response, paid)) return void request.resume();
      const lost = paying(request) && lose(paid);
      const upstream = httpRequest(`${originUrl}${request.url}`, { method: request.method, headers: request.headers });
      upstream.on('response', (site) => {
        if (lost) {
          const instead = lost === true ? { status: 502, headers: {}, body: 'bad gateway' } : lost;
          return void site
            .resume()
            .on('end', () => response.writeHead(instead.status, instead.headers).end(instead.body));
        }
        const headers = { ...site.headers };
        for (const name of strip) delete headers[name];
        response.writeHead(site.statusCode ?? 502, headers);
        site.pipe(response);
      });
      upstream.on('error', () => response.destroy());
      request.pipe(upstream);
    }).listen(0, '127.0.0.1');
    await new Promise((resolve) => proxy.once('listening', resolve));
    return {
      url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
      resent,
      close: () =>
        new Promise((resolve) => {
          proxy.closeAllConnections();
          proxy.close(resolve);
        }),
    };
  }

  /** An agent paying the slow site's USDC with `wallet` (funded with 1 USDC unless `funded` is false), and what it reports. */
  async function watchedAgent(wallet = newWallet(), funded = true) {
    if (funded) await fundUsdc(slow.app, wallet.address, '1');
    const events: PaymentEvent[] = [];
    const unconfirmed: UnconfirmedPaymentEvent['status'][] = [];
    const agent = createAgent({
      account: wallet,
      maxPriceUsd: '0.05',
      budgetUsd: '1',
      networks: [{ network: 'local' as const, asset: slow.app.chain.usdc }],
      rpcUrl: slow.app.chain.rpcUrl,
      pollingIntervalMs: 20,
      onPayment: (event) => events.push(event),
      onUnconfirmedPayment: (event) => unconfirmed.push(event.status),
    });
    return { agent, events, unconfirmed };
  }

  /**
   * The first fetch of `page` through the proxy, its payment held in the mempool (answered "pending")
   * until the proxy changed the answer to its resend; then the page fetched again. Returns what the
   * test checks.
   */
  async function payThenFetchAgain(proxy: { url: string; resent: Promise<void> }, page: string) {
    const proxyUrl = proxy.url;
    const chain = devTestClient(slow.app.chain.rpcUrl);
    const { agent, events, unconfirmed } = await watchedAgent();
    const before = (await transfersTo(slow.app, slow.payTo)).length;
    await chain.setAutomine(false);
    // Mined once the changed answer is on its way: the gate's API confirms the payment while the agent asks it.
    const mined = proxy.resent
      .then(() => new Promise((resolve) => setTimeout(resolve, 300)))
      .finally(async () => {
        await chain.setAutomine(true);
        await chain.mine({ blocks: 1 });
      });
    const first = await agent
      .fetch(`${proxyUrl}${page}`, { headers: { 'user-agent': GPTBOT } })
      .catch((error: Error) => error);
    await mined;
    const afterFirst = (await transfersTo(slow.app, slow.payTo)).length - before;
    const second = await agent.fetch(`${proxyUrl}${page}`, { headers: { 'user-agent': GPTBOT } });
    return {
      first: first instanceof Error ? first.message : [first.status, await first.text()],
      afterFirst,
      second: [second.status, await second.text()],
      transfers: (await transfersTo(slow.app, slow.payTo)).length - before,
      events,
      unconfirmed,
      spent: await agent.spent(),
    };
  }

  /**
   * One page, paid once: the first fetch reads it with the token the gate's API answers for its
   * payment, and so does the second.
   */
  function expectPaidOnce(result: Awaited<ReturnType<typeof payThenFetchAgain>>, page: string) {
    expect(result.first).toEqual([200, `content of ${page}`]);
    expect(result.afterFirst).toBe(1);
    expect(result.second).toEqual([200, `content of ${page}`]);
    expect(result.transfers).toBe(1);
    expect(result.events).toHaveLength(1);
    expect(result.spent.payments).toBe(1);
    expect(result.unconfirmed).toEqual([]);
  }

  /** Answers the resend itself (the second request carrying the payment) with `status` and `headers`. */
  const answerResend =
    (status: number, headers: Record<string, string> = {}) =>
    (request: IncomingMessage, response: ServerResponse, paid: number) => {
      if (!paying(request) || paid !== 2) return false;
      response.writeHead(status, headers).end();
      return true;
    };
  /** Sends the resend on without its payment: the site answers it with a fresh 402. */
  const dropResendPayment = (request: IncomingMessage, _response: ServerResponse, paid: number) => {
    if (paying(request) && paid === 2) {
      delete request.headers['payment-signature'];
      delete request.headers['x-payment'];
    }
    return false;
  };

  it.each([
    [
      'a 429 from a rate limiter in front of the site',
      '/article/limited',
      answerResend(429, { 'retry-after': '1' }),
      [],
    ],
    ['a 408 from a proxy', '/article/timed-out', answerResend(408), []],
    // A CDN dropped the v2 header, so the agent paid x402 v1, which the site pays through a gate of its own each time.
    ['the middleware’s 402 to a resent x402 v1 payment', '/article/v1-resent', () => false, ['payment-required']],
    ['a fresh 402 (the resend reached the site without its payment)', '/article/fresh-402', dropResendPayment, []],
    ['a redirect to another page', '/article/redirected', answerResend(302, { location: '/landing' }), []],
  ])(
    '%s answering the resend: paid once',
    async (_, page, answer, strip) => {
      const proxy = await startProxy(answer, strip);
      try {
        expectPaidOnce(await payThenFetchAgain(proxy, page), page);
      } finally {
        await proxy.close();
      }
    },
    60_000,
  );

  it('a 503 saying it took nothing (charged: false, a busy gate), then a refusal: held, not counted as spent', async () => {
    // Nothing says this payment is on its way: the 402 that answers it sent again is a refusal.
    const proxy = await startProxy((request, response, paid) => {
      if (!paying(request) || paid !== 1) return false;
      response.writeHead(503, { 'retry-after': '1', 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ detail: 'The payment gate is busy; the payment was not sent now', charged: false }),
      );
      return true;
    });
    try {
      // A wallet with no USDC: the gate's API refuses the payment.
      const { agent, unconfirmed } = await watchedAgent(newWallet(), false);
      await expect(agent.fetch(`${proxy.url}/article/busy`, { headers: { 'user-agent': GPTBOT } })).rejects.toThrow(
        /insufficient|balance|refused/i,
      );
      expect(unconfirmed).toEqual(['held']);
      expect(agent.spent()).toMatchObject({ payments: 0, usd: '0' });
    } finally {
      await proxy.close();
    }
  }, 60_000);

  it('a paid answer lost to a 502 that no gate answers for (x402 v1): the fetch resolves 502, and the payment is said unconfirmed', async () => {
    // The site paid the v1 payment through a gate of its own; the 402's gate knows nothing of it.
    const proxy = await startProxy(
      () => false,
      ['payment-required'],
      (paid) => paid === 1,
    );
    try {
      const { agent, events, unconfirmed } = await watchedAgent();
      const before = (await transfersTo(slow.app, slow.payTo)).length;
      const page = await agent.fetch(`${proxy.url}/article/lost-v1`, { headers: { 'user-agent': GPTBOT } });
      expect(page.status).toBe(502);
      expect((await transfersTo(slow.app, slow.payTo)).length - before).toBe(1);
      expect({ events: events.length, unconfirmed }).toEqual({ events: 0, unconfirmed: ['unknown'] });
      expect(agent.spent()).toMatchObject({ payments: 1, usd: '0.01' });
    } finally {
      await proxy.close();
    }
  }, 60_000);

  it('a load balancer’s 503 that replaced the paid answer (x402 v1), then the middleware’s 402 to the resend: never paid twice', async () => {
    // The site settled the payment; its answer was lost to a 503 page. Sent again, the v1 payment meets a
    // fresh gate, whose API answer (already settled elsewhere) the middleware gives as a 402.
    const proxy = await startProxy(
      () => false,
      ['payment-required'],
      (paid) =>
        paid === 1 && {
          status: 503,
          headers: { 'retry-after': '1', 'content-type': 'text/html' },
          body: '<html><body>503 Service Temporarily Unavailable</body></html>',
        },
    );
    try {
      const { agent, unconfirmed } = await watchedAgent();
      const before = (await transfersTo(slow.app, slow.payTo)).length;
      const url = `${proxy.url}/article/behind-a-balancer`;
      await expect(agent.fetch(url, { headers: { 'user-agent': GPTBOT } })).rejects.toThrow();
      expect((await transfersTo(slow.app, slow.payTo)).length - before).toBe(1);
      // The next fetch asks about it and pays nothing while nothing says what became of it.
      await expect(agent.fetch(url, { headers: { 'user-agent': GPTBOT } })).rejects.toThrow(/payment_unconfirmed/);
      expect((await transfersTo(slow.app, slow.payTo)).length - before).toBe(1);
      expect(unconfirmed).toEqual(['unknown']);
      expect(agent.spent()).toMatchObject({ payments: 1, usd: '0.01' });
    } finally {
      await proxy.close();
    }
  }, 60_000);
});
