import { decodeBase64Json, type PaymentRequirementsV1 } from '@crawlgate/core';
import { increaseTime } from '@crawlgate/devchain';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGatedSite, GPTBOT, type GatedSite } from '../middleware/support/gated-site';
import { newWallet, sendAuthorizationAsStranger, usdcBalance } from '../../../apps/api/test/test-agent';
import { fundedAgent } from './support/funded-agent';

/*
 * A plain x402 site (no Crawlgate gate, no verify_url to ask) whose paid answers never arrive: it
 * keeps each payment header and drops the connection. Nothing tells the agent whether the payment
 * was taken: it counts as spent, and the chain says once the authorization is over, whether or not
 * its page is fetched again: never used, its price comes back to the budget, once. Real local chain
 * (this worker's, its clock moved forward), a real server on loopback.
 */
describe('@crawlgate/agent: exact payments whose answer never came', () => {
  let gated: GatedSite;
  let site: Server;
  let siteUrl: string;
  /** The payment headers the site kept, in order. */
  const kept: string[] = [];
  const PRICE = 10_000n;
  const payTo = newWallet().address;

  beforeAll(async () => {
    gated = await startGatedSite();
    const { chain } = gated.app;
    site = createServer((request, response) => {
      const payment = request.headers['x-payment'];
      if (typeof payment === 'string') {
        kept.push(payment);
        if (!request.url?.startsWith('/trickle/')) return void response.socket?.destroy();
        // Refused, its reason never ending: a space a second, the connection kept alive.
        response.writeHead(402, { 'content-type': 'application/json' }).write(' ');
        const trickle = setInterval(() => response.write(' '), 1000);
        return void response.on('close', () => clearInterval(trickle));
      }
      const offer: PaymentRequirementsV1 = {
        scheme: 'exact',
        network: 'local',
        maxAmountRequired: PRICE.toString(),
        resource: `${siteUrl}${request.url}`,
        description: 'a page',
        mimeType: 'text/html',
        payTo,
        maxTimeoutSeconds: 60,
        asset: chain.usdc,
        extra: { name: chain.usdcName, version: chain.usdcVersion },
      };
      response
        .writeHead(402, { 'content-type': 'application/json' })
        .end(JSON.stringify({ x402Version: 1, error: 'payment required', accepts: [offer] }));
    });
    site.listen(0, '127.0.0.1');
    await new Promise((resolve) => site.once('listening', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  }, 60_000);
  afterAll(async () => {
    site.closeAllConnections();
    await new Promise((resolve) => site.close(resolve));
    await gated.close();
  }, 60_000);

  async function agentWhoseAnswerWasLost(withChain = true) {
    const { wallet, agent } = await fundedAgent(gated.app, { withChain });
    const page = `${siteUrl}/article/${wallet.address}`;
    const before = kept.length;
    await expect(agent.fetch(page, { headers: { 'user-agent': GPTBOT } })).rejects.toThrow();
    expect(kept).toHaveLength(before + 1);
    return { wallet, agent, page, header: kept[kept.length - 1] };
  }

  /** One whose authorization the site then settles, two it never uses (one fetched again), one with no chain to ask. */
  let unused: Awaited<ReturnType<typeof agentWhoseAnswerWasLost>>;
  let fetchedAgain: Awaited<ReturnType<typeof agentWhoseAnswerWasLost>>;
  let settled: Awaited<ReturnType<typeof agentWhoseAnswerWasLost>>;
  let blind: Awaited<ReturnType<typeof agentWhoseAnswerWasLost>>;
  beforeAll(async () => {
    unused = await agentWhoseAnswerWasLost();
    fetchedAgain = await agentWhoseAnswerWasLost();
    settled = await agentWhoseAnswerWasLost();
    blind = await agentWhoseAnswerWasLost(false);
    // The site settles the third one's authorization after all, as anyone holding it can.
    const payment = decodeBase64Json(settled.header) as Parameters<typeof sendAuthorizationAsStranger>[1];
    const hash = await sendAuthorizationAsStranger(gated.app, payment);
    expect((await gated.app.chain.publicClient.waitForTransactionReceipt({ hash })).status).toBe('success');
    expect(await usdcBalance(gated.app, settled.wallet.address)).toBe(1_000_000n - PRICE);
  }, 60_000);

  it('counts each as spent while its authorization may still be used', async () => {
    for (const { agent } of [unused, fetchedAgain, settled]) {
      expect(await agent.settleRefused()).toEqual({ freed: 0, spent: 0 });
      expect(await agent.spending()).toMatchObject({ usd: '0.01', remainingUsd: '0.04' });
    }
  });

  it('gives its price back once the chain shows it never used, once, whichever of its watch and a fetch of its page sees it first', async () => {
    // Its validBefore is 60 s on (the site's maxTimeoutSeconds), then the reorg margin (60 s): not over 30 s on.
    await increaseTime(gated.app.chain.rpcUrl, 30);
    expect(await unused.agent.settleRefused()).toEqual({ freed: 0, spent: 0 });
    await increaseTime(gated.app.chain.rpcUrl, 120);
    expect(await unused.agent.settleRefused()).toEqual({ freed: 1, spent: 0 });
    expect(await unused.agent.spending()).toMatchObject({ usd: '0', remainingUsd: '0.05' });
    expect(await unused.agent.settleRefused()).toEqual({ freed: 0, spent: 0 });
    expect(await usdcBalance(gated.app, unused.wallet.address)).toBe(1_000_000n);

    // The page fetched again first: asked of the chain there, and given back there (the fetch pays
    // it anew, and that answer is lost too); its watch then gives back only the second payment
    // (the chain's clock, moved on, is past its validBefore too), never the first again.
    await expect(fetchedAgain.agent.fetch(fetchedAgain.page, { headers: { 'user-agent': GPTBOT } })).rejects.toThrow();
    expect(kept).toHaveLength(5);
    expect(await fetchedAgain.agent.spending()).toMatchObject({ usd: '0.01', payments: 2, remainingUsd: '0.04' });
    expect(await fetchedAgain.agent.settleRefused()).toEqual({ freed: 1, spent: 0 });
    expect(await fetchedAgain.agent.spending()).toMatchObject({ usd: '0', remainingUsd: '0.05' });
    expect(await fetchedAgain.agent.settleRefused()).toEqual({ freed: 0, spent: 0 });
  });

  it('counts one the site settled as spent, never given back', async () => {
    expect(await settled.agent.settleRefused()).toEqual({ freed: 0, spent: 1 });
    expect(await settled.agent.spending()).toMatchObject({ usd: '0.01', remainingUsd: '0.04' });
    expect(await settled.agent.settleRefused()).toEqual({ freed: 0, spent: 0 });
  });

  it('ends a payment whose answer trickles in, and gives its price back once the chain shows it unused', async () => {
    const { wallet, agent } = await fundedAgent(gated.app);
    // No AbortSignal: nothing of the caller's would ever end it.
    const fetched = agent.fetch(`${siteUrl}/trickle/${wallet.address}`, { headers: { 'user-agent': GPTBOT } });
    const ended = await Promise.race([
      fetched.then(
        (response) => response.status,
        (error: Error) => error.name,
      ),
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 30_000)),
    ]);
    expect(ended).toBe('PaymentFailedError');
    expect(await agent.spending()).toMatchObject({ usd: '0', reservedUsd: '0.01', remainingUsd: '0.04' });
    await increaseTime(gated.app.chain.rpcUrl, 150);
    expect(await agent.settleRefused()).toEqual({ freed: 1, spent: 0 });
    expect(await agent.spending()).toMatchObject({ usd: '0', reservedUsd: '0', remainingUsd: '0.05' });
    expect(await usdcBalance(gated.app, wallet.address)).toBe(1_000_000n);
  }, 60_000);

  it('keeps it counted as spent with no chain to ask (no rpcUrl)', async () => {
    expect(await blind.agent.settleRefused()).toEqual({ freed: 0, spent: 0 });
    expect(await blind.agent.spending()).toMatchObject({ usd: '0.01', remainingUsd: '0.04' });
    expect(await usdcBalance(gated.app, blind.wallet.address)).toBe(1_000_000n);
  });
});
