import { createAgent } from '@crawlgate/agent';
import type { CrawlgateOptions } from '@crawlgate/middleware';
import { createPublicClient, createWalletClient, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { benchPublisher, benchSite, startBenchApiProcess, startBenchStack } from './bench-api';
import { benchChain } from './bench-app';
import { startChild } from './child';
import { relayExactTransfer } from './exact-settlement';
import type { BenchResult } from './goals';
import { format } from './measure';

const ROUNDS = 20;
/** Issue 13: a paid page at most half as long again as the settlement it cannot avoid. */
const PAYMENT_GOAL = 1.5;
const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)';

/**
 * What paying costs in wall time: an agent's fetch of a gated page from 402 to paid content
 * (middleware → API gate → EIP-3009 signature → verify, settle, receipt → token → content),
 * against the bare chain round trip the payment cannot avoid: sign, transferWithAuthorization,
 * receipt, through plain viem clients. Same local chain, same relayer key, one payment at a time;
 * the agent runs here, the gated site (Express) and the API each in a process of their own.
 */
export async function paymentBench(): Promise<BenchResult> {
  const stack = await startBenchStack();
  // Unpinned: the agent (this process), the site, the API, PostgreSQL and the chain share the cores,
  // one payment at a time.
  const api = await startBenchApiProcess(stack, { pinned: false });
  const publisher = await benchPublisher(api);
  const site = await benchSite(api, publisher, 'pay.example.com');
  const gate: CrawlgateOptions = { apiUrl: api.baseUrl, siteId: site.id, siteToken: site.token, secret: site.secret };
  const server = startChild('middleware-server.ts', { args: ['Express'], env: { BENCH_GATE: JSON.stringify(gate) } });
  try {
    const siteUrl = `http://127.0.0.1:${Number(await server.readLine())}`;
    const fund = async () => {
      const account = privateKeyToAccount(generatePrivateKey());
      await api.call('POST', '/v1/dev/faucet', { address: account.address, amount_usd: '5' });
      return account;
    };

    const agent = createAgent({
      account: await fund(),
      networks: [{ network: 'local', asset: stack.usdc }],
      maxPriceUsd: '0.05',
      budgetUsd: '5',
    });
    await agent.fetch(`${siteUrl}/article/warm-up`, { headers: { 'user-agent': GPTBOT } });
    const ours: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const started = performance.now();
      const response = await agent.fetch(`${siteUrl}/article/${i}`, { headers: { 'user-agent': GPTBOT } });
      if (response.status !== 200) throw new Error(`paid fetch answered ${response.status}`);
      await response.text();
      ours.push(performance.now() - started);
    }

    const payer = await fund();
    const chain = benchChain(stack);
    // Plain viem clients on the same node and relayer key (polling as often as the API's): the
    // chain's own round trips, whatever transports and batching the API's clients use.
    const relayer = createWalletClient({
      account: chain.relayer.account,
      chain: chain.relayer.chain,
      transport: http(stack.rpcUrl),
    });
    const reader = createPublicClient({
      transport: http(stack.rpcUrl),
      pollingInterval: chain.publicClient.pollingInterval,
    });
    const baseline: number[] = [];
    // Round -1 warms up, as the agent's first fetch does for ours.
    for (let i = -1; i < ROUNDS; i++) {
      const started = performance.now();
      const hash = await relayExactTransfer(relayer, chain, payer, payer.address, 10_000n);
      await reader.waitForTransactionReceipt({ hash });
      if (i >= 0) baseline.push(performance.now() - started);
    }

    const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    const ratio = mean(ours) / mean(baseline);
    const report = [
      '### Payment: 402 → paid content (agent, gated site and API each in a process of their own)',
      '',
      `| case | mean ms | p50 ms | rounds |`,
      '|---|---:|---:|---:|',
      `| agent.fetch of a gated page (middleware, API, settlement, token) | ${format(mean(ours), 1)} | ${format(p50(ours), 1)} | ${ROUNDS} |`,
      `| raw sign + transferWithAuthorization + receipt (baseline) | ${format(mean(baseline), 1)} | ${format(p50(baseline), 1)} | ${ROUNDS} |`,
      '',
      `Ratio of wall time, ours ÷ baseline: **${format(ratio, 2)}** (the rest is HTTP, checks, simulation and bookkeeping around the same settlement).`,
    ].join('\n');
    const goal = {
      figure: '402 → paid content (middleware, API, local chain) ÷ raw sign + settle + receipt, wall time (means)',
      reached: format(ratio, 2),
      goal: `≤ ${format(PAYMENT_GOAL, 1)}`,
      met: ratio <= PAYMENT_GOAL,
    };
    return { report, goals: [goal] };
  } finally {
    await server.close(); // the gate too: else its refresh keeps calling the API closed below
    await api.close();
    await stack.close();
  }
}
