/*
 * What the token-life tests share: a real gated site (Express; each path answers "content of
 * <path>") on an API of the given config and a local chain of its own (reverted at close), agents
 * paying from funded wallets of their own, and a clock moved forward for the agent, the gate and
 * the API (Date.now: one process), and for the chain when asked.
 */

import { increaseTime } from '@crawlgate/devchain';
import { crawlgateExpress } from '@crawlgate/middleware/express';
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fundUsdc, newWallet } from '../../../../apps/api/test/test-agent';
import type { TestAppOptions } from '../../../../apps/api/test/test-app';
import { createAgent, PaymentFailedError } from '../../../../libs/agent-sdk/src';
import { startGatedSite, GPTBOT, type GatedSite } from '../../middleware/support/gated-site';
import { switchOnBatchSettlement } from '../../middleware/support/voucher-site';

type Agent = ReturnType<typeof createAgent>;

export interface TokenLifeSite {
  gated: GatedSite;
  url: string;
  /**
   * An agent paying from a wallet of its own (1 USDC), through `fetch` (the global one by default);
   * with `depositUsd`, by batch-settlement vouchers from a channel of that deposit; `rpcUrl`: the
   * chain it reads (the site's by default; none: nothing it signed can be read on chain).
   */
  payingAgent(
    fetch?: typeof globalThis.fetch,
    depositUsd?: string,
    options?: { rpcUrl?: string | null },
  ): Promise<Agent>;
  /** The methods of the payments recorded for `path`. */
  paymentsFor(path: string): Promise<string[]>;
  close(): Promise<void>;
}

/** With `batchSettlement`, the site offers x402 batch-settlement vouchers beside exact payments. */
export async function startTokenLifeSite(
  config: TestAppOptions['config'],
  { batchSettlement = false } = {},
): Promise<TokenLifeSite> {
  const gated = await startGatedSite({ app: { isolateChain: true, config } });
  if (batchSettlement) await switchOnBatchSettlement(gated);
  const app = express();
  app.use(crawlgateExpress(gated.options()));
  app.get('/{*path}', (request, response) => void response.send(`content of ${request.path}`));
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    gated,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async payingAgent(fetch, depositUsd, { rpcUrl = gated.app.chain.rpcUrl } = {}) {
      const wallet = newWallet();
      await fundUsdc(gated.app, wallet.address, '1');
      return createAgent({
        account: wallet,
        maxPriceUsd: '0.05',
        budgetUsd: '1',
        networks: [{ network: 'local', asset: gated.app.chain.usdc }],
        rpcUrl: rpcUrl ?? undefined,
        pollingIntervalMs: 20,
        fetch,
        ...(depositUsd !== undefined && { batchSettlement: { depositUsd } }),
      });
    },
    async paymentsFor(path) {
      const payments = await gated.app.database.prisma.payment.findMany({ where: { url: path } });
      return payments.map((payment) => payment.method);
    },
    async close() {
      await new Promise((resolve) => server.close(resolve));
      await gated.close();
    },
  };
}

/**
 * A clock moved forward: Date.now, and with `chainRpcUrl` the chain's time too. Without the chain,
 * each test of the file starts at the real time; with it, where the last one left it, as the chain
 * does (its time goes back only when the file's chain is reverted at close); `mine: false` leaves
 * its newest block where it was (an idle chain that mines on demand). Registers the file's
 * beforeEach and afterEach.
 */
export function movingClock(
  chainRpcUrl?: () => string,
): (seconds: number, options?: { mine?: boolean }) => Promise<void> {
  let ahead = 0;
  const realNow = Date.now.bind(Date);
  beforeEach(() => {
    if (!chainRpcUrl) ahead = 0;
    jest.spyOn(Date, 'now').mockImplementation(() => realNow() + ahead);
  });
  afterEach(() => jest.restoreAllMocks());
  return async (seconds, { mine = true } = {}) => {
    ahead += seconds * 1000;
    if (chainRpcUrl) await increaseTime(chainRpcUrl(), seconds, { mine });
  };
}

/** A crawler's fetch of `url`: the page's status and text, or the agent's payment failure. */
export async function fetchPage(agent: Agent, url: string) {
  try {
    const response = await agent.fetch(url, { headers: { 'user-agent': GPTBOT } });
    return { status: response.status, body: await response.text() };
  } catch (error) {
    if (error instanceof PaymentFailedError) return { reason: error.reason, message: error.message };
    throw error;
  }
}

/**
 * A fetch through which, while `state.losing` says so, a paid request reaches the gate, which
 * settles it, and its answer is lost, and the posts to verify_url fail: the payment's outcome stays
 * unknown. `front` answers first when it returns a response (a front's own answers).
 */
export function losingPaidAnswers(
  front: (input: Parameters<typeof fetch>[0], init: RequestInit | undefined) => Promise<Response> | undefined = () =>
    undefined,
) {
  const state = { losing: true };
  const fetchThrough: typeof fetch = async (input, init) => {
    const answered = front(input, init);
    if (answered) return answered;
    if (state.losing && init?.method === 'POST') throw new TypeError('fetch failed');
    if (state.losing && new Headers(init?.headers).has('payment-signature')) {
      await (await fetch(input, init)).text();
      throw new TypeError('fetch failed');
    }
    return fetch(input, init);
  };
  return { state, fetchThrough };
}
