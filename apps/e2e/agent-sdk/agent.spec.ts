import { crawlgateExpress } from '@crawlgate/middleware/express';
import express from 'express';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { decodeBase64Json } from '@crawlgate/core';
import { devTestClient, increaseTime } from '@crawlgate/devchain';
import { createWalletClient, http, type LocalAccount } from 'viem';
import { toAccount } from 'viem/accounts';
import { startGatedSite, GPTBOT, type GatedSite } from '../middleware/support/gated-site';
import { fundEth, fundUsdc, newWallet, transfersTo } from '../../../apps/api/test/test-agent';
import { firstPaid, startDroppingProxy } from './support/dropping-proxy';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BudgetExceededError,
  createAgent,
  createFileBudgetStore,
  PaymentFailedError,
  PriceTooHighError,
  type PaymentEvent,
} from '../../../libs/agent-sdk/src';

/** Agents paying a real Express site gated by our middleware, through the real API and local chain. */
describe('@crawlgate/agent', () => {
  let gated: GatedSite;
  let server: Server;
  let siteUrl: string;
  beforeAll(async () => {
    gated = await startGatedSite();
    ({ server, url: siteUrl } = await startExpressSite(gated, (app) => {
      // A route that fails the first time it is reached (after the gate took the payment), then serves.
      const failedOnce = new Set<string>();
      app.get('/flaky/:id', (request, response) => {
        if (failedOnce.has(request.path)) return void response.send(`content of ${request.path}`);
        failedOnce.add(request.path);
        response.status(500).send('the route failed');
      });
      // One that fails without the gate's headers (a proxy or error page that drops them): no token reaches the agent.
      app.get('/lost/:id', (request, response) => {
        if (failedOnce.has(request.path)) return void response.send(`content of ${request.path}`);
        failedOnce.add(request.path);
        for (const name of response.getHeaderNames()) response.removeHeader(name);
        response.status(502).send('bad gateway');
      });
    }));
  }, 60_000);
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await gated.close();
  }, 60_000);

  /** Agents identify as a crawler the site charges (their own user agent is the builder's choice). */
  const asBot = { headers: { 'user-agent': GPTBOT } };
  /** The devchain's USDC is deployed at run time, so agents must be told to pay with it. */
  const localUsdc = () => [{ network: 'local' as const, asset: gated.app.chain.usdc }];

  async function fundedAgent(
    options: {
      maxPriceUsd?: string;
      budgetUsd?: string;
      payMode?: 'authorization' | 'transfer';
      budgetFile?: string;
      wallet?: LocalAccount;
      fetch?: typeof fetch;
    } = {},
  ) {
    const wallet = options.wallet ?? newWallet();
    await fundUsdc(gated.app, wallet.address, '1');
    const events: PaymentEvent[] = [];
    const agent = createAgent({
      account: wallet,
      maxPriceUsd: options.maxPriceUsd ?? '0.05',
      budgetUsd: options.budgetUsd ?? '1',
      payMode: options.payMode,
      budgetStore: options.budgetFile ? createFileBudgetStore(options.budgetFile) : undefined,
      networks: localUsdc(),
      rpcUrl: gated.app.chain.rpcUrl,
      pollingIntervalMs: 20,
      onPayment: (event) => events.push(event),
      fetch: options.fetch,
    });
    return { wallet, agent, events };
  }

  it('pays a priced page once, then reuses its token', async () => {
    const { agent, events, wallet } = await fundedAgent();
    const first = await agent.fetch(`${siteUrl}/article/one`, asBot);
    expect(first.status).toBe(200);
    expect(await first.text()).toBe('content of /article/one');
    expect(events).toEqual([
      expect.objectContaining({
        url: `${siteUrl}/article/one`,
        priceUsd: '0.01',
        amount: '10000',
        mode: 'authorization',
        payer: wallet.address,
        txHash: expect.stringMatching(/^0x/),
      }),
    ]);
    expect(agent.spent()).toMatchObject({ usd: '0.01', payments: 1 });

    const transfersBefore = (await transfersTo(gated.app, gated.payTo)).length;
    const again = await agent.fetch(`${siteUrl}/article/one?ref=feed`, asBot);
    expect(again.status).toBe(200);
    expect(agent.spent()).toMatchObject({ payments: 1 });
    expect((await transfersTo(gated.app, gated.payTo)).length).toBe(transfersBefore);
  });

  it('reads the page again with the token it was sent when the site fails after taking the payment, and pays once', async () => {
    const { agent, events } = await fundedAgent();
    const transfersBefore = (await transfersTo(gated.app, gated.payTo)).length;
    const page = await agent.fetch(`${siteUrl}/flaky/1`, asBot);
    expect([page.status, await page.text()]).toEqual([200, 'content of /flaky/1']);
    expect(events).toHaveLength(1);
    expect(agent.spent()).toMatchObject({ usd: '0.01', payments: 1 });
    expect((await agent.fetch(`${siteUrl}/flaky/1`, asBot)).status).toBe(200);
    expect((await transfersTo(gated.app, gated.payTo)).length).toBe(transfersBefore + 1);
  });

  it('asks the gate’s API for that token when the failure dropped the gate’s headers, and pays once', async () => {
    const { agent, events } = await fundedAgent();
    const page = await agent.fetch(`${siteUrl}/lost/1`, asBot);
    expect([page.status, await page.text()]).toEqual([200, 'content of /lost/1']);
    expect(events).toHaveLength(1);
    expect(agent.spent()).toMatchObject({ usd: '0.01', payments: 1 });
  });

  it('waits on the gate’s API when a proxy gave up while the settlement was pending, and pays once', async () => {
    // The API answers "pending" after 500 ms (its reconciler finishes it); a reverse proxy in front of the site gives up after
    // 300 ms with a 504; the settlement lands later.
    const slow = await startGatedSite({
      app: { isolateChain: true, config: { chain: { settlementTimeoutMs: 500, reconcileIntervalMs: 200 } } },
    });
    const site = express();
    site.use(crawlgateExpress(slow.options()));
    site.get('/{*path}', (request, response) => void response.send(`content of ${request.path}`));
    const origin = site.listen(0, '127.0.0.1');
    await new Promise((resolve) => origin.once('listening', resolve));
    const originUrl = `http://127.0.0.1:${(origin.address() as { port: number }).port}`;
    const proxy = createServer((request, response) => {
      const upstream = httpRequest(`${originUrl}${request.url}`, { method: request.method, headers: request.headers });
      const timer = setTimeout(() => {
        upstream.destroy();
        response.writeHead(504).end('gateway timeout');
      }, 300);
      upstream.on('response', (answer) => {
        clearTimeout(timer);
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      });
      upstream.on('error', () => undefined);
      request.pipe(upstream);
    }).listen(0, '127.0.0.1');
    await new Promise((resolve) => proxy.once('listening', resolve));
    const proxied = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
    const chain = devTestClient(slow.app.chain.rpcUrl);
    try {
      const wallet = newWallet();
      await fundUsdc(slow.app, wallet.address, '1');
      const events: PaymentEvent[] = [];
      const agent = createAgent({
        account: wallet,
        maxPriceUsd: '0.05',
        budgetUsd: '1',
        networks: [{ network: 'local' as const, asset: slow.app.chain.usdc }],
        rpcUrl: slow.app.chain.rpcUrl,
        pollingIntervalMs: 20,
        onPayment: (event) => events.push(event),
      });
      await chain.setAutomine(false);
      const mined = new Promise((resolve) => setTimeout(resolve, 2_000)).then(async () => {
        await chain.setAutomine(true);
        await chain.mine({ blocks: 1 });
      });
      const page = await agent.fetch(`${proxied}/article/proxied`, asBot);
      await mined;
      expect([page.status, await page.text()]).toEqual([200, 'content of /article/proxied']);
      expect(events).toHaveLength(1);
      expect((await agent.fetch(`${proxied}/article/proxied`, asBot)).status).toBe(200);
      expect(await transfersTo(slow.app, slow.payTo)).toHaveLength(1);
    } finally {
      await chain.setAutomine(true);
      await new Promise((resolve) => proxy.close(resolve));
      await new Promise((resolve) => origin.close(resolve));
      await slow.close();
    }
  }, 60_000);

  describe('when the connection drops after the gate served the paid answer', () => {
    // The gate settled and answered 200 with the page's token; the agent never read that answer.
    it('asks the gate’s API for the token that payment bought and reads the page with it, paying once', async () => {
      const proxy = await startDroppingProxy(siteUrl, firstPaid());
      try {
        const { agent, events } = await fundedAgent();
        const before = (await transfersTo(gated.app, gated.payTo)).length;
        const page = await agent.fetch(`${proxy.url}/article/dropped`, asBot);
        expect(proxy.lost).toEqual([expect.objectContaining({ status: 200 })]);
        expect(proxy.lost[0].headers['x-crawlgate-token']).toBeDefined();
        expect([page.status, await page.text()]).toEqual([200, 'content of /article/dropped']);
        expect(events).toHaveLength(1);
        expect((await agent.fetch(`${proxy.url}/article/dropped`, asBot)).status).toBe(200);
        expect(agent.spent()).toMatchObject({ usd: '0.01', payments: 1 });
        expect((await transfersTo(gated.app, gated.payTo)).length).toBe(before + 1);
      } finally {
        await proxy.close();
      }
    });

    it('on a page no token opens (";" parameters), reads it with the same payment sent again, paying once', async () => {
      const proxy = await startDroppingProxy(siteUrl, firstPaid());
      try {
        const { agent } = await fundedAgent();
        const before = (await transfersTo(gated.app, gated.payTo)).length;
        const target = '/article/dropped;jsessionid=abc';
        const page = await agent.fetch(`${proxy.url}${target}`, asBot);
        expect(proxy.lost).toEqual([expect.objectContaining({ status: 200 })]);
        expect([page.status, await page.text()]).toEqual([200, `content of ${target}`]);
        expect(agent.spent()).toMatchObject({ usd: '0.01', payments: 1 });
        expect((await transfersTo(gated.app, gated.payTo)).length).toBe(before + 1);
      } finally {
        await proxy.close();
      }
    });

    describe('when the gate’s API cannot be asked either', () => {
      /**
       * An agent whose posts to verify_url are answered by `verifyAnswer` while it returns one (the
       * API out of reach: a TypeError), else by the API; a proxy losing the site's answers `drops` picks.
       */
      async function partitioned(
        drops = firstPaid(),
        verifyAnswer: () => Response | TypeError | undefined = () => new TypeError('fetch failed'),
        options: { budgetUsd?: string } = {},
      ) {
        const proxy = await startDroppingProxy(siteUrl, drops);
        const state = { reachable: false, verifyPosts: 0 };
        const http: typeof fetch = (input, init) => {
          if (!String(input).includes('/verify')) return fetch(input, init);
          state.verifyPosts++;
          const answer = state.reachable ? undefined : verifyAnswer();
          if (answer instanceof TypeError) return Promise.reject(answer);
          return answer ? Promise.resolve(answer) : fetch(input, init);
        };
        const funded = await fundedAgent({ fetch: http, ...options });
        const before = (await transfersTo(gated.app, gated.payTo)).length;
        const paidOnce = async () => {
          expect(funded.agent.spent()).toMatchObject({ usd: '0.01', payments: 1 });
          expect((await transfersTo(gated.app, gated.payTo)).length).toBe(before + 1);
        };
        return { ...funded, proxy, state, paidOnce };
      }

      it('the next fetch of the page asks it before paying again, paying once', async () => {
        const { agent, events, proxy, state, paidOnce } = await partitioned();
        try {
          await expect(agent.fetch(`${proxy.url}/article/lost-twice`, asBot)).rejects.toThrow(/fetch failed/);
          expect(proxy.lost).toEqual([expect.objectContaining({ status: 200 })]);
          state.reachable = true;
          const page = await agent.fetch(`${proxy.url}/article/lost-twice`, asBot);
          expect([page.status, await page.text()]).toEqual([200, 'content of /article/lost-twice']);
          expect(events).toHaveLength(1);
          await paidOnce();
        } finally {
          await proxy.close();
        }
      });

      it('reads that page with the budget spent by its payment: asking about it costs nothing', async () => {
        const { agent, proxy, state, paidOnce } = await partitioned(firstPaid(), undefined, { budgetUsd: '0.01' });
        try {
          await expect(agent.fetch(`${proxy.url}/article/lost-budget`, asBot)).rejects.toThrow(/fetch failed/);
          state.reachable = true;
          const page = await agent.fetch(`${proxy.url}/article/lost-budget`, asBot);
          expect([page.status, await page.text()]).toEqual([200, 'content of /article/lost-budget']);
          await paidOnce();
        } finally {
          await proxy.close();
        }
      });

      it.each([
        [
          'a 200 whose body breaks off',
          () => new Response(new ReadableStream({ pull: (c) => c.error(new Error('reset')) })),
        ],
        ['a proxy’s 404 page', () => new Response('<h1>Not Found</h1>', { status: 404 })],
        ['a redirect', () => new Response(null, { status: 302, headers: { location: 'https://elsewhere.example/' } })],
        ['a 503', () => new Response('{"detail":"overloaded"}', { status: 503 })],
        // The API's 409: the proof paid another gate (a v1 payment pays a gate minted at the site). Money moved.
        [
          'a 409',
          () => new Response('{"detail":"This payment proof was already used for another gate"}', { status: 409 }),
        ],
      ])(
        'fails the next fetch with payment_unconfirmed on %s, paying nothing more, and reads the page once it answers',
        async (_, answer) => {
          let lostFirst = false;
          const { agent, proxy, state, paidOnce } = await partitioned(firstPaid(), () => {
            if (lostFirst) return answer();
            lostFirst = true;
            return new TypeError('fetch failed');
          });
          try {
            const url = `${proxy.url}/article/unsaid-${state.verifyPosts}-${Math.random().toString(36).slice(2)}`;
            await expect(agent.fetch(url, asBot)).rejects.toThrow(/fetch failed/);
            await expect(agent.fetch(url, asBot)).rejects.toMatchObject({ reason: 'payment_unconfirmed' });
            state.reachable = true;
            expect((await agent.fetch(url, asBot)).status).toBe(200);
            await paidOnce();
          } finally {
            await proxy.close();
          }
        },
      );

      it('fails the fetches waiting on that page together, asking once', async () => {
        const { agent, proxy, state } = await partitioned();
        try {
          const url = `${proxy.url}/article/lost-at-once`;
          await expect(agent.fetch(url, asBot)).rejects.toThrow(/fetch failed/);
          const posts = state.verifyPosts;
          const fetches = await Promise.allSettled([1, 2, 3].map(() => agent.fetch(url, asBot)));
          expect(fetches.map((one) => one.status === 'rejected' && (one.reason as PaymentFailedError).reason)).toEqual(
            Array(3).fill('payment_unconfirmed'),
          );
          expect(state.verifyPosts - posts).toBe(1);
          expect(agent.spent()).toMatchObject({ payments: 1 });
        } finally {
          await proxy.close();
        }
      });

      it('on a page no token opens, keeps that payment when the read sending it again is lost too, paying once', async () => {
        const { agent, proxy, state, paidOnce } = await partitioned(firstPaid(2));
        try {
          const url = `${proxy.url}/article/lost-again;jsessionid=abc`;
          await expect(agent.fetch(url, asBot)).rejects.toThrow(/fetch failed/);
          state.reachable = true;
          await expect(agent.fetch(url, asBot)).rejects.toThrow(/fetch failed/);
          expect(proxy.lost.map((answer) => answer.status)).toEqual([200, 200]);
          const page = await agent.fetch(url, asBot);
          expect([page.status, await page.text()]).toEqual([200, 'content of /article/lost-again;jsessionid=abc']);
          await paidOnce();
        } finally {
          await proxy.close();
        }
      });
    });

    it('pays once for concurrent fetches of that page: those waiting read it with the same token', async () => {
      const proxy = await startDroppingProxy(siteUrl, firstPaid());
      try {
        const { agent } = await fundedAgent();
        const before = (await transfersTo(gated.app, gated.payTo)).length;
        const pages = await Promise.all(
          [1, 2, 3].map(async () => (await agent.fetch(`${proxy.url}/article/dropped-at-once`, asBot)).text()),
        );
        expect(proxy.lost).toHaveLength(1);
        expect(pages).toEqual(Array(3).fill('content of /article/dropped-at-once'));
        expect(agent.spent()).toMatchObject({ usd: '0.01', payments: 1 });
        expect((await transfersTo(gated.app, gated.payTo)).length).toBe(before + 1);
      } finally {
        await proxy.close();
      }
    });

    it('keeps that token when the read with it is lost too: the next fetch reads the page with it, paying nothing more', async () => {
      let tokenReadsDropped = 0;
      const paid = firstPaid();
      const proxy = await startDroppingProxy(siteUrl, (request) => {
        if (paid(request)) return true;
        return request.headers['x-crawlgate-token'] !== undefined && tokenReadsDropped++ === 0;
      });
      try {
        const { agent } = await fundedAgent();
        const before = (await transfersTo(gated.app, gated.payTo)).length;
        await expect(agent.fetch(`${proxy.url}/article/dropped-twice`, asBot)).rejects.toThrow(/fetch failed/);
        expect(proxy.lost.map((answer) => answer.status)).toEqual([200, 200]);
        const page = await agent.fetch(`${proxy.url}/article/dropped-twice`, asBot);
        expect([page.status, await page.text()]).toEqual([200, 'content of /article/dropped-twice']);
        expect(agent.spent()).toMatchObject({ usd: '0.01', payments: 1 });
        expect((await transfersTo(gated.app, gated.payTo)).length).toBe(before + 1);
      } finally {
        await proxy.close();
      }
    });
  });

  it('pays nothing for a free page', async () => {
    const { agent } = await fundedAgent();
    expect((await agent.fetch(`${siteUrl}/free/post`, asBot)).status).toBe(200);
    expect(agent.spent().payments).toBe(0);
  });

  it('refuses a price above maxPriceUsd, and pays one below it', async () => {
    const { agent } = await fundedAgent({ maxPriceUsd: '0.005' });
    await expect(agent.fetch(`${siteUrl}/article/pricey`, asBot)).rejects.toBeInstanceOf(PriceTooHighError);
    expect((await agent.fetch(`${siteUrl}/cheap/teaser`, asBot)).status).toBe(200);
    expect(agent.spent()).toMatchObject({ usd: '0.001', payments: 1 });
  });

  it('stops at the budget', async () => {
    const { agent } = await fundedAgent({ budgetUsd: '0.015' });
    expect((await agent.fetch(`${siteUrl}/article/a`, asBot)).status).toBe(200);
    const refusal = agent.fetch(`${siteUrl}/article/b`, asBot);
    await expect(refusal).rejects.toBeInstanceOf(BudgetExceededError);
    await expect(refusal).rejects.toMatchObject({ remainingUsd: '0.005' });
    expect(agent.spent()).toMatchObject({ usd: '0.01', payments: 1 });
  });

  it('keeps its budget in a file across a restart: the restarted agent pays only what is left', async () => {
    const budgetFile = join(mkdtempSync(join(tmpdir(), 'crawlgate-agent-')), 'budget.json');
    const wallet = newWallet();
    const before = await fundedAgent({ budgetUsd: '0.025', budgetFile, wallet });
    expect((await before.agent.fetch(`${siteUrl}/article/run-1`, asBot)).status).toBe(200);
    expect((await before.agent.fetch(`${siteUrl}/article/run-2`, asBot)).status).toBe(200);

    const transfers = (await transfersTo(gated.app, gated.payTo)).length;
    const restarted = createAgent({
      account: wallet,
      maxPriceUsd: '0.05',
      budgetUsd: '0.025',
      budgetStore: createFileBudgetStore(budgetFile),
      networks: localUsdc(),
      pollingIntervalMs: 20,
    });
    expect(restarted.spent()).toMatchObject({ usd: '0.02', payments: 2, remainingUsd: '0.005' });
    const refusal = restarted.fetch(`${siteUrl}/article/run-3`, asBot);
    await expect(refusal).rejects.toBeInstanceOf(BudgetExceededError);
    await expect(refusal).rejects.toMatchObject({ remainingUsd: '0.005' });
    expect((await transfersTo(gated.app, gated.payTo)).length).toBe(transfers);
    // The first agent, still running, sees the same budget.
    await expect(before.agent.fetch(`${siteUrl}/article/run-4`, asBot)).rejects.toBeInstanceOf(BudgetExceededError);
    expect(await before.agent.spending()).toMatchObject({ usd: '0.02', payments: 2 });
  });

  it('pays once for ten concurrent fetches of one unpaid page', async () => {
    const { agent } = await fundedAgent();
    const before = (await transfersTo(gated.app, gated.payTo)).length;
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => agent.fetch(`${siteUrl}/article/popular`, asBot)),
    );
    expect(responses.map((response) => response.status)).toEqual(Array(10).fill(200));
    expect(agent.spent().payments).toBe(1);
    expect((await transfersTo(gated.app, gated.payTo)).length).toBe(before + 1);
  });

  it('can pay by sending USDC itself and proving the transfer', async () => {
    const { agent, events, wallet } = await fundedAgent({ payMode: 'transfer' });
    await fundEth(gated.app, wallet.address);
    const response = await agent.fetch(`${siteUrl}/article/by-transfer`, asBot);
    expect(response.status).toBe(200);
    expect(events).toEqual([expect.objectContaining({ mode: 'transfer', priceUsd: '0.01' })]);
  });

  it('pays pages fetched at once by transfer one transfer each, none refused for its nonce', async () => {
    // Sent at once, the transfers took the same pending nonce: half were refused by the node,
    // the pages failed, and their price stayed counted as spent with no USDC moved.
    const { agent, wallet } = await fundedAgent({ payMode: 'transfer' });
    await fundEth(gated.app, wallet.address);
    const before = (await transfersTo(gated.app, gated.payTo)).length;
    const pages = ['a', 'b', 'c', 'd'].map((id) => `${siteUrl}/article/at-once-by-transfer-${id}`);
    const answers = await Promise.all(pages.map((page) => agent.fetch(page, asBot).then((r) => r.status, String)));
    expect(answers).toEqual([200, 200, 200, 200]);
    expect((await transfersTo(gated.app, gated.payTo)).length).toBe(before + 4);
    expect(agent.spent()).toMatchObject({ usd: '0.04', payments: 4 });
  });

  /** fetch as the network gives it, but the API's answers to the first `count` transfer proofs are lost (the proof itself arrives). */
  function losingProofAnswers(count: number): typeof fetch {
    let left = count;
    return async (input, init) => {
      const response = await fetch(input, init);
      if (left === 0 || init?.method !== 'POST' || !String(input).endsWith('/verify')) return response;
      left--;
      await response.arrayBuffer();
      throw new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } });
    };
  }

  async function transferAgent(fetchWith: typeof fetch) {
    const funded = await fundedAgent({ payMode: 'transfer', fetch: fetchWith });
    await fundEth(gated.app, funded.wallet.address);
    return funded.agent;
  }

  it('posts a transfer’s proof again on the next fetch when its answer was lost, instead of sending a second transfer', async () => {
    const agent = await transferAgent(losingProofAnswers(1));
    const before = (await transfersTo(gated.app, gated.payTo)).length;
    await expect(agent.fetch(`${siteUrl}/article/proof-lost`, asBot)).rejects.toThrow('fetch failed');
    const again = await agent.fetch(`${siteUrl}/article/proof-lost`, asBot);
    expect(again.status).toBe(200);
    expect(await again.text()).toBe('content of /article/proof-lost');
    expect((await transfersTo(gated.app, gated.payTo)).length).toBe(before + 1);
    expect(agent.spent()).toMatchObject({ usd: '0.01', payments: 1 });
  });

  it('sends no second transfer for a page whose proof it could not sign, and proves the first once it can (helper-440)', async () => {
    const wallet = newWallet();
    let refusals = 1;
    const signer = toAccount({
      address: wallet.address,
      signMessage: (args) =>
        refusals-- > 0 ? Promise.reject(new Error('the signer timed out')) : wallet.signMessage(args),
      signTransaction: (transaction, options) => wallet.signTransaction(transaction, options),
      signTypedData: (typedData) => wallet.signTypedData(typedData),
    });
    const { agent } = await fundedAgent({ payMode: 'transfer', wallet: signer });
    await fundEth(gated.app, wallet.address);
    const before = (await transfersTo(gated.app, gated.payTo)).length;
    await expect(agent.fetch(`${siteUrl}/article/proof-unsigned`, asBot)).rejects.toThrow('the signer timed out');
    const again = await agent.fetch(`${siteUrl}/article/proof-unsigned`, asBot);
    expect([again.status, await again.text()]).toEqual([200, 'content of /article/proof-unsigned']);
    expect((await transfersTo(gated.app, gated.payTo)).length).toBe(before + 1);
    expect(agent.spent()).toMatchObject({ usd: '0.01', payments: 1 });
  });

  it('sends no second transfer for a page while the first one’s proof still gets no answer', async () => {
    const agent = await transferAgent(losingProofAnswers(Infinity));
    const before = (await transfersTo(gated.app, gated.payTo)).length;
    await expect(agent.fetch(`${siteUrl}/article/proof-never`, asBot)).rejects.toThrow('fetch failed');
    await expect(agent.fetch(`${siteUrl}/article/proof-never`, asBot)).rejects.toMatchObject({
      reason: 'transfer_unproven',
    });
    expect((await transfersTo(gated.app, gated.payTo)).length).toBe(before + 1);
    expect(agent.spent()).toMatchObject({ usd: '0.01' });
  });

  /**
   * A site offering a real gate's terms with its own payTo, and either its own verify_url answering
   * `verify` or the real one (which refuses a transfer that did not pay its gate). Its pages as a bot fetches them.
   */
  async function startCopyingSite(
    payTo: string,
    verify?: (response: import('node:http').ServerResponse) => void,
    maxTimeoutSeconds?: number,
  ) {
    const copying = createServer((request, response) => {
      if (request.method === 'POST' && verify) return verify(response);
      void fetch(`${siteUrl}${request.url}`, asBot).then(async (offered) => {
        const body = (await offered.json()) as { verify_url: string; accepts: { payTo: string }[] };
        if (verify) body.verify_url = body.verify_url.replace(/^https?:\/\/[^/]+/, copyingUrl);
        for (const offer of body.accepts as { payTo: string; maxTimeoutSeconds?: number }[]) {
          offer.payTo = payTo;
          if (maxTimeoutSeconds !== undefined) offer.maxTimeoutSeconds = maxTimeoutSeconds;
        }
        response.writeHead(402, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => copying.listen(0, '127.0.0.1', resolve));
    const copyingUrl = `http://127.0.0.1:${(copying.address() as { port: number }).port}`;
    return { url: copyingUrl, close: () => new Promise((resolve) => copying.close(resolve)) };
  }

  // The USDC moved whatever the verify_url says after: with no token for it, the page waits for
  // that proof (asked again) until its gate expires, rather than send a second transfer.
  it.each([
    [
      'its own verify_url refusing every proof',
      (r: any) => void r.writeHead(400, { 'content-type': 'application/json' }).end('{"detail":"no such transfer"}'),
    ],
    [
      'its own verify_url answering 200 without a token',
      (r: any) => void r.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"paid"}'),
    ],
    [
      'its own verify_url answering an HTML 403',
      (r: any) => void r.writeHead(403, { 'content-type': 'text/html' }).end('<h1>Forbidden</h1>'),
    ],
    ['the real verify_url, which refuses a transfer to another payTo', undefined],
  ])('sends one transfer for a page of a site copying a real gate with %s', async (_, verify) => {
    const attacker = newWallet().address;
    const copying = await startCopyingSite(attacker, verify);
    try {
      const { agent, wallet } = await fundedAgent({ payMode: 'transfer' });
      await fundEth(gated.app, wallet.address);
      const trusting = createAgent({
        account: wallet,
        maxPriceUsd: '0.05',
        budgetUsd: '1',
        payMode: 'transfer',
        networks: localUsdc(),
        rpcUrl: gated.app.chain.rpcUrl,
        apiUrl: gated.app.baseUrl,
      });
      for (const [i, payer] of [agent, trusting].entries()) {
        const page = `${copying.url}/article/copied-${i}`;
        for (let fetches = 0; fetches < 3; fetches++) await payer.fetch(page, asBot).catch(() => undefined);
        await expect(payer.fetch(page, asBot)).rejects.toMatchObject({ reason: 'transfer_unproven' });
      }
      expect(await transfersTo(gated.app, attacker)).toHaveLength(2);
    } finally {
      await copying.close();
    }
  });

  it('holds such a page for a gate’s life whatever timeout the copying site names', async () => {
    const attacker = newWallet().address;
    const refuse = (r: any) =>
      void r.writeHead(400, { 'content-type': 'application/json' }).end('{"detail":"no such transfer"}');
    const copying = await startCopyingSite(attacker, refuse, 1);
    try {
      const { agent, wallet } = await fundedAgent({ payMode: 'transfer' });
      await fundEth(gated.app, wallet.address);
      for (let fetches = 0; fetches < 3; fetches++) {
        await agent.fetch(`${copying.url}/article/short-timeout`, asBot).catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, 1_500));
      }
      expect(await transfersTo(gated.app, attacker)).toHaveLength(1);
    } finally {
      await copying.close();
    }
  }, 30_000);

  it('signs its transfer proof through a WalletClient too', async () => {
    const wallet = newWallet();
    await fundUsdc(gated.app, wallet.address, '1');
    await fundEth(gated.app, wallet.address);
    const client = createWalletClient({
      account: wallet,
      chain: gated.app.chain.relayer.chain,
      transport: http(gated.app.chain.rpcUrl),
    });
    const agent = createAgent({
      account: client,
      maxPriceUsd: '0.05',
      budgetUsd: '1',
      payMode: 'transfer',
      networks: localUsdc(),
      pollingIntervalMs: 20,
    });
    const response = await agent.fetch(`${siteUrl}/article/by-wallet-client`, asBot);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('content of /article/by-wallet-client');
    // The history's proof is the WalletClient's signature too.
    expect((await agent.payments()).items).toEqual([expect.objectContaining({ url: '/article/by-wallet-client' })]);
  });

  it('reports a refused payment as PaymentFailedError with the reason: nothing spent, its price held', async () => {
    const broke = createAgent({ account: newWallet(), maxPriceUsd: '0.05', budgetUsd: '1', networks: localUsdc() });
    const attempt = broke.fetch(`${siteUrl}/article/unaffordable`, asBot);
    await expect(attempt).rejects.toBeInstanceOf(PaymentFailedError);
    await expect(attempt).rejects.toMatchObject({ reason: 'insufficient_funds' });
    // The site holds the signed authorization, which it could settle once the wallet is funded.
    expect(broke.spent()).toMatchObject({ usd: '0', payments: 0, remainingUsd: '0.99' });
  });

  it('reads its profile and payment history from the API it paid through', async () => {
    const { agent } = await fundedAgent();
    await agent.fetch(`${siteUrl}/article/history-1`, asBot);
    await agent.fetch(`${siteUrl}/cheap/history-2`, asBot);
    expect(await agent.profile()).toMatchObject({ payments_count: 2, total_spent_usd: '0.011' });
    // Each call signs a fresh proof that the agent holds the wallet: the cursor's page needs one too.
    const first = await agent.payments({ limit: 1 });
    expect(first.items).toEqual([expect.objectContaining({ url: '/cheap/history-2' })]);
    const second = await agent.payments({ limit: 1, cursor: first.next_cursor! });
    expect(second.items).toEqual([expect.objectContaining({ url: '/article/history-1' })]);
  });
});

/*
 * A payment the agent sent without learning its fate, whose gate's API stays out of reach: once the
 * chain shows its authorization expired unused, it paid nothing, and the page is paid anew. A real
 * Express site and API on a chain of this block's own (its clock is moved forward, then restored).
 */
describe('@crawlgate/agent: a payment in doubt that the chain shows expired unused', () => {
  let gated: GatedSite;
  let server: Server;
  let siteUrl: string;
  beforeAll(async () => {
    gated = await startGatedSite({ app: { isolateChain: true } });
    ({ server, url: siteUrl } = await startExpressSite(gated));
  }, 60_000);
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await gated.close();
  }, 60_000);

  it('asks while it cannot say, then, past its validBefore, pays anew', async () => {
    const wallet = newWallet();
    await fundUsdc(gated.app, wallet.address, '1');
    // The paid request never reaches the site, and verify_url never answers.
    const payments: string[] = [];
    let paidRequestsLost = true;
    const partitioned: typeof fetch = (input, init) => {
      if (String(input).includes('/verify')) return Promise.reject(new TypeError('fetch failed'));
      const payment = new Headers(init?.headers).get('payment-signature');
      if (payment) payments.push(payment);
      return payment && paidRequestsLost ? Promise.reject(new TypeError('fetch failed')) : fetch(input, init);
    };
    const agent = createAgent({
      account: wallet,
      maxPriceUsd: '0.05',
      budgetUsd: '1',
      networks: [{ network: 'local' as const, asset: gated.app.chain.usdc }],
      rpcUrl: gated.app.chain.rpcUrl,
      pollingIntervalMs: 20,
      fetch: partitioned,
    });
    const page = `${siteUrl}/article/never-sent`;
    const asBot = { headers: { 'user-agent': GPTBOT } };
    await expect(agent.fetch(page, asBot)).rejects.toThrow(/fetch failed/);
    await expect(agent.fetch(page, asBot)).rejects.toMatchObject({ reason: 'payment_unconfirmed' });
    expect(payments).toHaveLength(1);

    // The chain's clock past the authorization's validBefore and the agent's margin against reorgs.
    const { validBefore } = (decodeBase64Json(payments[0]) as { payload: { authorization: { validBefore: string } } })
      .payload.authorization;
    const chainNow = (await gated.app.chain.publicClient.getBlock()).timestamp;
    await increaseTime(gated.app.chain.rpcUrl, Number(BigInt(validBefore) - chainNow) + 61);
    paidRequestsLost = false;
    // Paid anew (a new authorization: signed by the wall clock, already expired on this chain, so refused).
    const anew = await agent.fetch(page, asBot).catch((error: unknown) => error);
    expect(anew).not.toMatchObject({ reason: 'payment_unconfirmed' });
    expect(payments).toHaveLength(2);
    expect(payments[1]).not.toBe(payments[0]);
    // The first is no longer counted as spent: it paid nothing (the second, refused, stays reserved).
    expect(agent.spent()).toMatchObject({ usd: '0', reservedUsd: '0.01' });
  });
});

/** A real Express site gated by `gated`'s middleware: `routes` first, then every other path's content; its server and URL. */
async function startExpressSite(gated: GatedSite, routes: (app: express.Express) => void = () => undefined) {
  const app = express();
  app.use(crawlgateExpress(gated.options()));
  routes(app);
  app.get('/{*path}', (request, response) => void response.send(`content of ${request.path}`));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
}
