/*
 * @crawlgate/agent paying with x402 batch-settlement vouchers: a real framework site gated by our
 * middleware, the real API and the local chain (set up like the middleware's interop spec with the
 * unmodified @x402/evm client). One deposit, one voucher per page, the claimer pays the publisher
 * exactly, and the agent takes back the rest after the withdraw delay.
 */

import { decodeBase64Json, encodeBase64Json, X402_BATCH_SETTLEMENT_ADDRESS } from '@crawlgate/core';
import { increaseTime } from '@crawlgate/devchain';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseAbiItem } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { ClaimerService } from '../../../apps/api/src/batch-settlement/claimer.service';
import { fundEth, fundUsdc, newWallet, usdcBalance } from '../../../apps/api/test/test-agent';
import { GPTBOT, type GatedSite } from '../middleware/support/gated-site';
import { depositsOf as depositsOfSite, startVoucherSite } from '../middleware/support/voucher-site';
import { FRAMEWORKS, page, type SiteServer } from '../middleware/support/site-servers';
import {
  BudgetExceededError,
  createAgent,
  PaymentFailedError,
  UnsupportedPaymentError,
  type AgentOptions,
  type PaymentEvent,
} from '../../../libs/agent-sdk/src';

const ROOT = join(__dirname, '..', '..', '..');
const PAGES = 100;
const PRICE = 10_000n; // the site's default, 0.01 USD
const asBot = { headers: { 'user-agent': GPTBOT } };

let site: GatedSite;
let server: SiteServer;

let close: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ site, server, close } = await startVoucherSite());
});
afterAll(() => close?.());

/** An agent paying with vouchers, on a new wallet funded with `fundUsd` (2), or on `wallet` as it is. */
async function voucherAgent({
  wallet: given,
  fundUsd,
  ...options
}: Partial<AgentOptions> & { fundUsd?: string; wallet?: PrivateKeyAccount } = {}) {
  const wallet = given ?? newWallet();
  if (!given) await fundUsdc(site.app, wallet.address, fundUsd ?? '2');
  const events: PaymentEvent[] = [];
  const agent = createAgent({
    account: wallet,
    maxPriceUsd: '0.05',
    budgetUsd: '2',
    networks: [{ network: 'local', asset: site.app.chain.usdc }],
    rpcUrl: site.app.chain.rpcUrl,
    pollingIntervalMs: 20,
    batchSettlement: { depositUsd: '1.5' },
    onPayment: (event) => events.push(event),
    ...options,
  });
  return { wallet, agent, events };
}

const depositsOf = (channelId: `0x${string}`) => depositsOfSite(site, channelId);

it('uses the escrow x402 clients expect, the default of batchSettlement.escrows', () => {
  expect(site.app.chain.batchSettlement!.escrow.toLowerCase()).toBe(X402_BATCH_SETTLEMENT_ADDRESS.toLowerCase());
});

it('is off unless asked for: an agent without batchSettlement pays the same site with exact', async () => {
  const { agent, events } = await voucherAgent({ batchSettlement: undefined });
  expect((await agent.fetch(`${server.url}/articles/exact-only`, asBot)).status).toBe(200);
  expect(events).toEqual([expect.objectContaining({ mode: 'authorization', txHash: expect.stringMatching(/^0x/) })]);
  expect(agent.channels()).toEqual([]);
});

it('tops up within the budget, and stops paying vouchers once the budget is spent', async () => {
  const { wallet, agent, events } = await voucherAgent({ budgetUsd: '0.05', batchSettlement: { depositUsd: '0.03' } });
  for (let i = 1; i <= 5; i++)
    expect((await agent.fetch(`${server.url}/articles/budget-${i}`, asBot)).status).toBe(200);
  await expect(agent.fetch(`${server.url}/articles/budget-6`, asBot)).rejects.toBeInstanceOf(BudgetExceededError);
  expect(events).toHaveLength(5);
  const [channel] = agent.channels();
  // 0.03, then the 0.02 left of the budget: two deposits, nothing signed above them.
  expect((await depositsOf(channel.channelId)).map((log) => log.args.amount)).toEqual([30_000n, 20_000n]);
  expect(channel).toMatchObject({ deposited: 50_000n, charged: 50_000n });
  expect(agent.spent()).toMatchObject({ usd: '0.05', remainingUsd: '0' });
  expect(await usdcBalance(site.app, wallet.address)).toBe(2_000_000n - 50_000n);
});

it('pays concurrent fetches of one site one voucher after another: one deposit, every total once', async () => {
  const { agent, events } = await voucherAgent({ batchSettlement: { depositUsd: '0.2' } });
  const responses = await Promise.all(
    Array.from({ length: 10 }, (_, i) => agent.fetch(`${server.url}/articles/together-${i}`, asBot)),
  );
  expect(await Promise.all(responses.map((r) => r.text()))).toEqual(
    Array.from({ length: 10 }, (_, i) => page(`together-${i}`)),
  );
  const [channel] = agent.channels();
  expect(agent.channels()).toHaveLength(1);
  expect(events).toHaveLength(10);
  expect(await depositsOf(channel.channelId)).toHaveLength(1);
  const rows = await site.app.database.prisma.payment.findMany({
    where: { channelId: channel.channelId },
    orderBy: { cumulativeAmount: 'asc' },
  });
  expect(rows.map((row) => row.cumulativeAmount)).toEqual(Array.from({ length: 10 }, (_, i) => BigInt(i + 1) * PRICE));
});

/**
 * A proxy in front of the gated site that edits the batch-settlement offer of every 402 and records
 * what it is sent; `loseAnswer` says of a request whether its answer is lost (the connection cut
 * once the site has answered it).
 */
async function editingProxy(
  edit: (accept: Record<string, unknown>) => void,
  loseAnswer: (headers: IncomingHttpHeaders) => boolean = () => false,
) {
  const seen: IncomingHttpHeaders[] = [];
  const proxy = createServer(async (request, response) => {
    seen.push(request.headers);
    const forwarded = Object.fromEntries(
      Object.entries(request.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name)),
    ) as Record<string, string>;
    const upstream = await fetch(`${server.url}${request.url}`, { headers: forwarded });
    const headers = new Headers(upstream.headers);
    const required = headers.get('payment-required');
    if (required) {
      const body = decodeBase64Json(required) as { accepts: Record<string, unknown>[] };
      for (const accept of body.accepts) if (accept.scheme === 'batch-settlement') edit(accept);
      body.accepts = body.accepts.filter((accept) => accept.scheme === 'batch-settlement');
      headers.set('payment-required', encodeBase64Json(body));
    }
    if (loseAnswer(request.headers)) return void response.socket?.destroy();
    headers.delete('content-length');
    headers.delete('content-encoding');
    response.writeHead(upstream.status, Object.fromEntries(headers));
    response.end(upstream.status === 402 ? '{}' : await upstream.text());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise((resolve) => proxy.close(resolve)),
  };
}

describe('an answer lost after the deposit was made', () => {
  it('counts the deposit as made; the next page is charged after what the site says it charged: one deposit, each page once', async () => {
    let lose = true;
    const proxy = await editingProxy(
      () => undefined,
      (headers) => lose && headers['payment-signature'] !== undefined,
    );
    try {
      const { wallet, agent } = await voucherAgent({ batchSettlement: { depositUsd: '0.5' } });
      await expect(agent.fetch(`${proxy.url}/articles/lost-1`, asBot)).rejects.toThrow();
      // No answer: the deposit may have been made (here it was): counted in the channel, and reserved
      // until the chain says it was made (once its authorization is over).
      expect(agent.spent()).toMatchObject({ usd: '0', reservedUsd: '0.5', remainingUsd: '1.5' });
      lose = false;
      expect((await agent.fetch(`${proxy.url}/articles/lost-2`, asBot)).status).toBe(200);
      const [channel] = agent.channels();
      expect(await depositsOf(channel.channelId)).toHaveLength(1);
      expect(channel).toMatchObject({ deposited: 500_000n, charged: 2n * PRICE });
      expect(agent.spent()).toMatchObject({ reservedUsd: '0.5', remainingUsd: '1.5' });
      expect(await usdcBalance(site.app, wallet.address)).toBe(2_000_000n - 500_000n);
    } finally {
      await proxy.close();
    }
  });
});

describe('a site that rewrites the terms the API offered', () => {
  /** A proxy in front of the gated site that edits the batch-settlement offer of every 402 and records what it is sent. */
  async function rewritingProxy(edit: (accept: Record<string, unknown>) => void) {
    return editingProxy(edit);
  }

  it('another receiver: the agent signs only what the offer says, the API refuses it, and no deposit is made', async () => {
    const thief = newWallet().address;
    const proxy = await rewritingProxy((accept) => (accept.payTo = thief));
    try {
      const { wallet, agent } = await voucherAgent();
      const failure = await agent.fetch(`${proxy.url}/articles/stolen`, asBot).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(PaymentFailedError);
      expect((failure as PaymentFailedError).reason).toBe('invalid_batch_settlement_evm_receiver_mismatch');
      const sent = proxy.seen.map((h) => h['payment-signature']).filter(Boolean) as string[];
      expect(sent).toHaveLength(1);
      const payment = decodeBase64Json(sent[0]) as {
        payload: {
          channelConfig: { receiver: string };
          voucher: { maxClaimableAmount: string };
          deposit: { amount: string };
        };
      };
      expect(payment.payload.channelConfig.receiver).toBe(thief);
      expect(payment.payload.voucher.maxClaimableAmount).toBe(PRICE.toString());
      expect(payment.payload.deposit.amount).toBe('1500000');
      expect(await usdcBalance(site.app, wallet.address)).toBe(2_000_000n);
      expect(await depositsOf(agent.channels()[0].channelId)).toHaveLength(0);
      // Refused, yet the proxy holds a valid authorization: it stays reserved (not spent) until resent or replaced.
      expect(agent.spent()).toMatchObject({ usd: '0', payments: 0, remainingUsd: '0.5' });
    } finally {
      await proxy.close();
    }
  });

  it.each([
    [
      'another escrow',
      (accept: Record<string, unknown>) => ((accept.extra as Record<string, unknown>).escrow = newWallet().address),
    ],
    ['another token', (accept: Record<string, unknown>) => (accept.asset = newWallet().address)],
  ])('%s: the agent does not pay at all (nothing signed is sent)', async (_name, edit) => {
    const proxy = await rewritingProxy(edit);
    try {
      const { agent } = await voucherAgent();
      await expect(agent.fetch(`${proxy.url}/articles/elsewhere`, asBot)).rejects.toBeInstanceOf(
        UnsupportedPaymentError,
      );
      expect(proxy.seen.filter((h) => h['payment-signature'] || h['x-payment'])).toEqual([]);
      expect(agent.channels()).toEqual([]);
    } finally {
      await proxy.close();
    }
  });
});

describe('cooperative refund (x402 type: refund)', () => {
  const REFUNDED = parseAbiItem('event Refunded(bytes32 indexed channelId, address indexed sender, uint128 amount)');
  const refundsOf = (channelId: `0x${string}`) =>
    site.app.chain.publicClient.getLogs({
      address: site.app.chain.batchSettlement!.escrow,
      event: REFUNDED,
      args: { channelId },
      fromBlock: 0n,
    });

  /** An agent that paid `pages` pages of its own on one channel (deposit 1.5 of a 2 USD budget and wallet). */
  async function agentThatPaid(name: string, pages = 3, options: Partial<AgentOptions> = {}) {
    const paid = await voucherAgent(options);
    for (let i = 1; i <= pages; i++)
      expect((await paid.agent.fetch(`${server.url}/articles/${name}-${i}`, asBot)).status).toBe(200);
    return { ...paid, channelId: paid.agent.channels()[0].channelId };
  }

  it('gives back at once all the channel holds beyond its charges; the channel stays open and the next page deposits again', async () => {
    const { wallet, agent, channelId } = await agentThatPaid('refund-all');
    const step = await agent.refund(`${server.url}/articles/refund-all-1`);
    expect(step).toEqual({ channelId, amount: String(1_500_000n - 3n * PRICE), txHash: expect.stringMatching(/^0x/) });
    expect((await refundsOf(channelId)).map((log) => [log.transactionHash, log.args.amount])).toEqual([
      [step.txHash, 1_500_000n - 3n * PRICE],
    ]);
    // What came back is in the wallet and no longer counted as spent.
    expect(await usdcBalance(site.app, wallet.address)).toBe(2_000_000n - 3n * PRICE);
    expect(agent.spent()).toMatchObject({ usd: '0.03', remainingUsd: '1.97' });
    expect(agent.channels()).toEqual([
      expect.objectContaining({ channelId, deposited: 3n * PRICE, charged: 3n * PRICE, withdrawing: false }),
    ]);
    // The next page needs a deposit again, on the same channel.
    expect((await agent.fetch(`${server.url}/articles/refund-all-4`, asBot)).status).toBe(200);
    expect(await depositsOf(channelId)).toHaveLength(2);
    expect(agent.channels()).toEqual([expect.objectContaining({ channelId, charged: 4n * PRICE })]);
  });

  it('gives back what is asked when that is less', async () => {
    const { wallet, agent, channelId } = await agentThatPaid('refund-part', 1);
    expect(await agent.refund(`${server.url}/articles/refund-part-1`, { amountUsd: '0.5' })).toMatchObject({
      channelId,
      amount: '500000',
    });
    expect(await usdcBalance(site.app, wallet.address)).toBe(2_000_000n - 1_000_000n);
    expect(agent.channels()).toEqual([expect.objectContaining({ deposited: 1_000_000n, charged: PRICE })]);
    expect(agent.spent()).toMatchObject({ usd: '1' });
  });

  it('asks nothing of a site it has no channel with, and nothing without a chain to check the answer on', async () => {
    const { agent } = await voucherAgent();
    await expect(agent.refund(`${server.url}/articles/never-paid`)).rejects.toMatchObject({ reason: 'no_channel' });
    const { agent: chainless } = await voucherAgent({ rpcUrl: undefined });
    await expect(chainless.refund(`${server.url}/articles/never-paid`)).rejects.toThrow(/rpcUrl/);
  });

  /** The local chain's JSON-RPC, with `rewrite` applied to each call's result: a node that lags, or another chain's. */
  async function rpcProxy(rewrite: (method: string, result: unknown) => unknown) {
    const proxy = createServer(async (request, response) => {
      let body = '';
      for await (const chunk of request) body += chunk;
      const call = JSON.parse(body) as { method: string };
      const upstream = await fetch(site.app.chain.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      const answer = (await upstream.json()) as { result?: unknown };
      if ('result' in answer) answer.result = rewrite(call.method, answer.result);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
      close: () => new Promise((resolve) => proxy.close(resolve)),
    };
  }

  it('asks nothing when its node is on another chain than the channel', async () => {
    const otherChain = await rpcProxy((method, result) => (method === 'eth_chainId' ? '0x1' : result));
    try {
      const { agent, channelId } = await agentThatPaid('refund-chain', 1, { rpcUrl: otherChain.url });
      await expect(agent.refund(`${server.url}/articles/refund-chain-1`)).rejects.toMatchObject({
        reason: 'wrong_chain',
      });
      expect(await refundsOf(channelId)).toHaveLength(0);
      expect(agent.channels()[0].deposited).toBe(1_500_000n);
    } finally {
      await otherChain.close();
    }
  });

  it('starts no withdrawal of a channel on another chain than its node, and keeps paying on it', async () => {
    const otherChain = await rpcProxy((method, result) => (method === 'eth_chainId' ? '0x1' : result));
    try {
      const { agent, channelId } = await agentThatPaid('withdraw-chain', 1, { rpcUrl: otherChain.url });
      expect(await agent.initiateWithdraw()).toEqual([]);
      expect(await agent.finalizeWithdraw()).toEqual([]);
      expect(agent.channels()).toEqual([expect.objectContaining({ channelId, withdrawing: false })]);
      expect((await agent.fetch(`${server.url}/articles/withdraw-chain-2`, asBot)).status).toBe(200);
      expect(agent.channels()).toEqual([expect.objectContaining({ channelId, charged: 2n * PRICE })]);
      expect(await depositsOf(channelId)).toHaveLength(1);
    } finally {
      await otherChain.close();
    }
  });

  it('asks its refund of the site named, not of one the page redirects to', async () => {
    const { agent, channelId } = await agentThatPaid('refund-redirect', 1);
    const redirector = createServer((request, response) =>
      response.writeHead(302, { location: `${server.url}${request.url}` }).end(),
    );
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/articles/refund-redirect-1`;
      await expect(agent.refund(url)).rejects.toMatchObject({ reason: 'no_channel', message: /redirects to/ });
      expect(await refundsOf(channelId)).toHaveLength(0);
    } finally {
      await new Promise((resolve) => redirector.close(resolve));
    }
  });

  describe('a site that answers the refund request itself, with a transaction that is not this refund', () => {
    /** A proxy to the real site that answers refund requests 200 with a PAYMENT-RESPONSE naming `forged()` (when it names one), and forwards the rest. */
    async function forgingProxy(forged: () => Promise<string | undefined>) {
      let refundRequests = 0;
      const proxy = createServer(async (request, response) => {
        const signature = request.headers['payment-signature'];
        const payment =
          typeof signature === 'string' ? (decodeBase64Json(signature) as { payload: { type: string } }) : undefined;
        const transaction = payment?.payload.type === 'refund' ? await forged() : undefined;
        if (transaction !== undefined) {
          refundRequests++;
          const settlement = {
            success: true,
            transaction,
            network: 'eip155:31337',
            amount: '1470000',
          };
          response
            .writeHead(200, { 'payment-response': encodeBase64Json(settlement) })
            .end('{"message":"Refund acknowledged"}');
          return;
        }
        const forwarded = Object.fromEntries(
          Object.entries(request.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name)),
        ) as Record<string, string>;
        const upstream = await fetch(`${server.url}${request.url}`, { headers: forwarded });
        const headers = new Headers(upstream.headers);
        headers.delete('content-length');
        headers.delete('content-encoding');
        response.writeHead(upstream.status, Object.fromEntries(headers));
        response.end(await upstream.text());
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      return {
        url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
        requests: () => refundRequests,
        close: () => new Promise((resolve) => proxy.close(resolve)),
      };
    }

    it.each([
      ["this channel's own earlier refund, counted already", 'earlier'],
      ["this channel's own earlier refund, read through a node a block behind", 'lagging'],
      ["another channel's refund, mined after the request", 'other'],
      ['a transaction hash the chain never saw', 'unknown'],
    ])(
      '%s: refused, nothing credited',
      async (_name, kind) => {
        let forged: () => Promise<string | undefined> = async () => undefined;
        const proxy = await forgingProxy(() => forged());
        // 'lagging': the agent's node says the chain is a block shorter, so the earlier refund looks new.
        const lagging =
          kind === 'lagging'
            ? await rpcProxy((method, result) =>
                method === 'eth_blockNumber' ? `0x${(BigInt(result as string) - 1n).toString(16)}` : result,
              )
            : undefined;
        try {
          const { agent } = await voucherAgent(lagging ? { rpcUrl: lagging.url } : {});
          for (let i = 1; i <= 2; i++)
            expect((await agent.fetch(`${proxy.url}/articles/forged-${kind}-${i}`, asBot)).status).toBe(200);
          const [{ channelId }] = agent.channels();
          if (kind === 'earlier' || kind === 'lagging') {
            // A real refund of this channel, passed on to the real site, and credited.
            await agent.refund(`${proxy.url}/articles/forged-${kind}-1`, { amountUsd: '0.1' });
            const earlier = (await refundsOf(channelId))[0].transactionHash;
            forged = async () => earlier;
          }
          if (kind === 'other') {
            const victim = await agentThatPaid('forged-other-victim', 1);
            // Refunded once this agent's request reached the site: mined after it asked.
            forged = async () => (await victim.agent.refund(`${server.url}/articles/forged-other-victim-1`)).txHash;
          }
          if (kind === 'unknown') forged = async () => `0x${'ab'.repeat(32)}`;
          const before = agent.spent();
          const channelBefore = agent.channels()[0];
          await expect(agent.refund(`${proxy.url}/articles/forged-${kind}-1`)).rejects.toMatchObject({
            reason: 'refund_unconfirmed',
          });
          expect(proxy.requests()).toBe(1);
          expect(agent.spent()).toEqual(before);
          expect(agent.channels()[0]).toEqual(channelBefore);
          // No refund of this channel but the one the test asked of the real site.
          expect(await refundsOf(channelId)).toHaveLength(kind === 'earlier' || kind === 'lagging' ? 1 : 0);
        } finally {
          await proxy.close();
          await lagging?.close();
        }
      },
      30_000,
    );
  });
});

describe('batchSettlement.maxChannels: channels holding deposits across origins', () => {
  // The same gated site served on two more ports: three origins, as a wildcard DNS site's hosts would be.
  let others: SiteServer[] = [];
  beforeAll(async () => {
    others = [await FRAMEWORKS[0].start(site.options()), await FRAMEWORKS[0].start(site.options())];
  });
  afterAll(() => Promise.all(others.map((other) => other.close())));
  const origins = () => [server.url, ...others.map((other) => other.url)];

  it('a third origin is paid exact, with no third deposit; the channels held keep taking vouchers', async () => {
    const { wallet, agent, events } = await voucherAgent({ batchSettlement: { depositUsd: '0.5', maxChannels: 2 } });
    const [a, b, c] = origins();
    for (const origin of [a, b, c]) expect((await agent.fetch(`${origin}/articles/cap-1`, asBot)).status).toBe(200);
    expect(events.map((e) => e.mode)).toEqual(['voucher', 'voucher', 'authorization']);
    expect(events[2].txHash).toMatch(/^0x/);
    const channels = agent.channels();
    expect(channels.map((channel) => channel.origin)).toEqual([a, b]);
    for (const channel of channels) expect(await depositsOf(channel.channelId)).toHaveLength(1);
    // 2 funded − two deposits of 0.5 − one page paid exact.
    expect(await usdcBalance(site.app, wallet.address)).toBe(2_000_000n - 1_000_000n - PRICE);
    expect(agent.spent()).toMatchObject({ usd: '1.01' });
    expect((await agent.fetch(`${a}/articles/cap-2`, asBot)).status).toBe(200);
    expect(events.at(-1)).toMatchObject({ mode: 'voucher', channelId: channels[0].channelId });
    expect(await depositsOf(channels[0].channelId)).toHaveLength(1);
  });

  it('two new origins fetched at once with one place left: one opens a channel, the other pays exact', async () => {
    const { agent, events } = await voucherAgent({ batchSettlement: { depositUsd: '0.5', maxChannels: 2 } });
    const [a, b, c] = origins();
    expect((await agent.fetch(`${a}/articles/cap-together-1`, asBot)).status).toBe(200);
    const responses = await Promise.all(
      [b, c].map((origin) => agent.fetch(`${origin}/articles/cap-together-2`, asBot)),
    );
    expect(responses.map((response) => response.status)).toEqual([200, 200]);
    expect(events.map((e) => e.mode).sort()).toEqual(['authorization', 'voucher', 'voucher']);
    expect(agent.channels()).toHaveLength(2);
    for (const channel of agent.channels()) expect(await depositsOf(channel.channelId)).toHaveLength(1);
  });

  it('counts the channels of its channel file; a channel refunded in full frees its place', async () => {
    const wallet = newWallet();
    await fundUsdc(site.app, wallet.address, '2');
    const channelFile = join(mkdtempSync(join(tmpdir(), 'crawlgate-agent-')), 'channels.json');
    const batchSettlement = { depositUsd: '0.5', maxChannels: 2, channelFile };
    const [a, b, c] = origins();
    const first = await voucherAgent({ wallet, batchSettlement });
    for (const origin of [a, b])
      expect((await first.agent.fetch(`${origin}/articles/cap-file-1`, asBot)).status).toBe(200);
    first.agent.close();

    const { agent, events } = await voucherAgent({ wallet, batchSettlement });
    expect(agent.channels()).toHaveLength(2);
    expect((await agent.fetch(`${c}/articles/cap-file-1`, asBot)).status).toBe(200);
    expect(events.map((e) => e.mode)).toEqual(['authorization']);
    expect(agent.channels()).toHaveLength(2);
    // Refunded all it held beyond its charges, a's channel holds no deposit: c may open one.
    await agent.refund(`${a}/articles/cap-file-1`);
    expect((await agent.fetch(`${c}/articles/cap-file-2`, asBot)).status).toBe(200);
    expect(events.map((e) => e.mode)).toEqual(['authorization', 'voucher']);
    expect(agent.channels().map((channel) => channel.origin)).toEqual([a, b, c]);
    expect(await depositsOf(agent.channels()[2].channelId)).toHaveLength(1);
    agent.close();
  });
});

it('keeps its channels in a channel file: restarted after a crash, it pays on the same channel with no new deposit, and withdraws from it', async () => {
  const key = generatePrivateKey();
  const wallet = privateKeyToAccount(key);
  await fundUsdc(site.app, wallet.address, '2');
  const channelFile = join(mkdtempSync(join(tmpdir(), 'crawlgate-agent-')), 'channels.json');
  const pageUrl = (i: number) => `${server.url}/articles/restart-${i}`;
  // The first run, in a process of its own: three pages, then killed.
  const child = spawn(
    process.execPath,
    ['-r', '@swc-node/register', join(__dirname, 'support/channel-file-agent.ts')],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        SWC_NODE_PROJECT: join(ROOT, 'tsconfig.base.json'),
        PRIVATE_KEY: key,
        USDC: site.app.chain.usdc,
        RPC_URL: site.app.chain.rpcUrl,
        CHANNEL_FILE: channelFile,
        PAGES: JSON.stringify([1, 2, 3].map(pageUrl)),
        USER_AGENT: GPTBOT,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const exited = once(child, 'exit');
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const statuses = [];
  for (let i = 0; i < 3; i++) statuses.push((await lines.next()).value);
  expect(statuses).toEqual(['200', '200', '200']);
  child.kill('SIGKILL');
  await exited;
  expect(existsSync(`${channelFile}.lock`)).toBe(true); // the crash left its lock behind
  // As if the third answer had been lost: the file says charged for two pages, signed for three,
  // the third voucher unanswered (as written before it left).
  const stored = JSON.parse(readFileSync(channelFile, 'utf8'));
  expect(stored.channels).toHaveLength(1);
  expect(stored.channels[0]).toMatchObject({ charged: String(3n * PRICE), signed: String(3n * PRICE), unanswered: [] });
  stored.channels[0].charged = String(2n * PRICE);
  stored.channels[0].unanswered = [String(3n * PRICE)];
  writeFileSync(channelFile, JSON.stringify(stored));

  const restarted = () => voucherAgent({ wallet, batchSettlement: { depositUsd: '0.5', channelFile } });
  const { agent, events } = await restarted();
  const [channel] = agent.channels();
  expect(agent.channels()).toEqual([
    expect.objectContaining({ deposited: 500_000n, charged: 2n * PRICE, withdrawing: false }),
  ]);
  // Another agent on the file while this one runs is refused.
  await expect(restarted()).rejects.toThrow(/used by another running agent/);

  // The site's corrective 402 (its total is three pages, with this agent's own voucher for it) catches the agent up.
  for (const i of [4, 5]) {
    const response = await agent.fetch(pageUrl(i), asBot);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(page(`restart-${i}`));
  }
  expect(events.map((e) => e.channelId)).toEqual([channel.channelId, channel.channelId]);
  expect(await depositsOf(channel.channelId)).toHaveLength(1);
  const rows = await site.app.database.prisma.payment.findMany({
    where: { channelId: channel.channelId },
    orderBy: { cumulativeAmount: 'asc' },
  });
  expect(rows.map((row) => [row.url, row.cumulativeAmount])).toEqual(
    [1, 2, 3, 4, 5].map((i) => [`/articles/restart-${i}`, BigInt(i) * PRICE]),
  );
  expect(agent.channels()).toEqual([expect.objectContaining({ charged: 5n * PRICE })]);

  // The restored channel can be withdrawn from: all but the five pages its vouchers promised. A
  // first try without gas fails; the channel is not left marked as withdrawn, the second try takes it back.
  await expect(agent.initiateWithdraw()).rejects.toThrow();
  await fundEth(site.app, wallet.address);
  expect(await agent.initiateWithdraw()).toEqual([
    expect.objectContaining({ channelId: channel.channelId, amount: String(500_000n - 5n * PRICE) }),
  ]);
  expect(JSON.parse(readFileSync(channelFile, 'utf8')).channels[0]).toMatchObject({
    charged: String(5n * PRICE),
    withdrawing: true,
  });

  // close() lets another agent of this process open the file; the closed one pays no more vouchers.
  agent.close();
  await expect(agent.fetch(pageUrl(6), asBot)).rejects.toThrow(/was released/);
  const next = await restarted();
  expect(next.agent.channels()).toEqual([expect.objectContaining({ channelId: channel.channelId, withdrawing: true })]);
  next.agent.close();
});

it('restarted with a channel file that counts a deposit the chain never saw (its answer lost as the process stopped), reads the escrow and deposits anew', async () => {
  const wallet = newWallet();
  await fundUsdc(site.app, wallet.address, '1');
  const channelFile = join(mkdtempSync(join(tmpdir(), 'crawlgate-agent-')), 'channels.json');
  const batchSettlement = { depositUsd: '0.03', channelFile };
  const pageUrl = (i: number) => `${server.url}/articles/never-made-${i}`;
  const first = await voucherAgent({ wallet, batchSettlement });
  for (const i of [1, 2]) expect((await first.agent.fetch(pageUrl(i), asBot)).status).toBe(200);
  first.agent.close();
  // The file is written before a deposit leaves: as if a second one had, and the process had stopped.
  const stored = JSON.parse(readFileSync(channelFile, 'utf8'));
  expect(stored.channels[0]).toMatchObject({ deposited: String(3n * PRICE), charged: String(2n * PRICE) });
  stored.channels[0].deposited = String(6n * PRICE);
  writeFileSync(channelFile, JSON.stringify(stored));

  const { agent, events } = await voucherAgent({ wallet, batchSettlement });
  for (const i of [3, 4, 5]) {
    const response = await agent.fetch(pageUrl(i), asBot);
    expect([response.status, await response.text()]).toEqual([200, page(`never-made-${i}`)]);
  }
  const [channel] = agent.channels();
  expect(events.map((e) => e.channelId)).toEqual([channel.channelId, channel.channelId, channel.channelId]);
  // The escrow's 30,000, then one deposit more (the next page's, of depositUsd): each page charged once.
  expect(await depositsOf(channel.channelId)).toHaveLength(2);
  expect(agent.channels()).toEqual([expect.objectContaining({ deposited: 6n * PRICE, charged: 5n * PRICE })]);
  const rows = await site.app.database.prisma.payment.findMany({
    where: { channelId: channel.channelId },
    orderBy: { cumulativeAmount: 'asc' },
  });
  expect(rows.map((row) => [row.url, row.cumulativeAmount])).toEqual(
    [1, 2, 3, 4, 5].map((i) => [`/articles/never-made-${i}`, BigInt(i) * PRICE]),
  );
  agent.close();
});

it('sends no voucher it could not write to its channel file first', async () => {
  const wallet = newWallet();
  await fundUsdc(site.app, wallet.address, '1');
  const folder = mkdtempSync(join(tmpdir(), 'crawlgate-agent-'));
  const { agent, events } = await voucherAgent({
    wallet,
    batchSettlement: { depositUsd: '0.5', channelFile: join(folder, 'channels.json') },
  });
  expect((await agent.fetch(`${server.url}/articles/unwritten-1`, asBot)).status).toBe(200);
  const [channel] = agent.channels();
  rmSync(folder, { recursive: true }); // the disk fails: the next write cannot happen
  await expect(agent.fetch(`${server.url}/articles/unwritten-2`, asBot)).rejects.toThrow(/ENOENT/);
  const paidUrls = async () =>
    (await site.app.database.prisma.payment.findMany({ where: { channelId: channel.channelId } })).map((p) => p.url);
  expect(await paidUrls()).toEqual(['/articles/unwritten-1']); // the site never saw the voucher
  expect(agent.channels()).toEqual([expect.objectContaining({ charged: PRICE })]);
  // Once the file can be written again, the same page is paid with the next total.
  mkdirSync(folder);
  expect((await agent.fetch(`${server.url}/articles/unwritten-2`, asBot)).status).toBe(200);
  expect((await paidUrls()).sort()).toEqual(['/articles/unwritten-1', '/articles/unwritten-2']);
  expect(events.map((e) => e.channelId)).toEqual([channel.channelId, channel.channelId]);
  expect(await depositsOf(channel.channelId)).toHaveLength(1);
});

// Last: it moves the chain's clock a withdraw delay ahead of the wall clock, which authorizations are signed by.
it(`pays ${PAGES} pages with one deposit, every page arrives, the claim pays the publisher exactly, and the rest comes back after the delay`, async () => {
  // The earlier tests' vouchers are claimed first, so that this claim is this agent's pages alone.
  const claimer = site.app.app.get(ClaimerService);
  await claimer.runOnce({ force: true });
  const publisherBefore = await usdcBalance(site.app, site.payTo);
  const { wallet, agent, events } = await voucherAgent();
  for (let i = 1; i <= PAGES; i++) {
    const response = await agent.fetch(`${server.url}/articles/${i}`, asBot);
    expect({ page: i, status: response.status }).toEqual({ page: i, status: 200 });
    expect(await response.text()).toBe(page(String(i)));
  }
  expect(events).toHaveLength(PAGES);
  expect(new Set(events.map((e) => `${e.mode} ${e.channelId} ${e.amount}`))).toEqual(
    new Set([`voucher ${events[0].channelId} ${PRICE}`]),
  );
  const [channel] = agent.channels();
  expect(agent.channels()).toHaveLength(1);
  expect(channel).toMatchObject({
    channelId: events[0].channelId,
    deposited: 1_500_000n,
    charged: BigInt(PAGES) * PRICE,
    withdrawing: false,
  });
  expect(await depositsOf(channel.channelId)).toHaveLength(1);
  // The deposit is what left the wallet, and what the budget counts.
  expect(await usdcBalance(site.app, wallet.address)).toBe(500_000n);
  expect(agent.spent()).toMatchObject({ usd: '1.5', payments: 1 });
  // A page paid before is read on its token: no new voucher.
  expect((await agent.fetch(`${server.url}/articles/7`, asBot)).status).toBe(200);
  expect(events).toHaveLength(PAGES);

  expect(await usdcBalance(site.app, site.payTo)).toBe(publisherBefore);
  await claimer.runOnce({ force: true });
  expect(await usdcBalance(site.app, site.payTo)).toBe(publisherBefore + BigInt(PAGES) * PRICE);

  await fundEth(site.app, wallet.address);
  const started = await agent.initiateWithdraw();
  expect(started).toEqual([expect.objectContaining({ channelId: channel.channelId, amount: '500000' })]);
  await expect(agent.finalizeWithdraw()).rejects.toThrow(); // the delay has not passed
  // A channel being withdrawn takes no more vouchers: the next page opens a new one.
  expect((await agent.fetch(`${server.url}/articles/after`, asBot)).status).toBe(200);
  expect(events.at(-1)?.channelId).not.toBe(channel.channelId);
  const reopened = agent.channels()[1];
  // What is left of the budget (2 − 1.5), not the 1.5 asked: the budget still counts the first deposit.
  expect(reopened.deposited).toBe(500_000n);
  await increaseTime(site.app.chain.rpcUrl, site.app.chain.batchSettlement!.withdrawDelaySeconds);
  expect(await agent.finalizeWithdraw()).toEqual([
    expect.objectContaining({ channelId: channel.channelId, amount: '500000' }),
  ]);
  // 2 funded − 1.5 deposited − 0.5 into the second channel + 0.5 back.
  expect(await usdcBalance(site.app, wallet.address)).toBe(500_000n);
  // What came back is no longer spent: 1.5 + 0.5 deposited, 0.5 returned.
  expect(agent.spent()).toMatchObject({ usd: '1.5', remainingUsd: '0.5' });
});
