import { createAgent } from '@crawlgate/agent';
import {
  exactAuthorization,
  MAX_AUTHORIZATION_SECONDS,
  transferWithAuthorizationTypedData,
  USDC_ABI,
  X402_BATCH_SETTLEMENT_ADDRESS,
} from '@crawlgate/core';
import { DEV_ROLES } from '@crawlgate/devchain';
import { parseSignature, type Hash } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { benchPublisher, benchSite, startBenchApi } from './bench-api';
import { startServer } from './bench-servers';
import type { BenchResult } from './goals';
import { format } from './measure';

/** Pages paid from one channel: issue 14 judges gas per page at 100. */
const PAGES = 100;
const PRICE_USD = '0.001';
const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)';

/**
 * x402 batch-settlement against exact (issue 14), with @crawlgate/agent paying a site gated by our
 * Express middleware, the API on PostgreSQL and the local chain, one page at a time:
 * - gas: everything the escrow's transactions used for PAGES vouchers (the deposit, the claim and
 *   the settle, from their receipts) ÷ PAGES, against one exact settlement's gas (a relayed
 *   transferWithAuthorization of the same token);
 * - latency: a page paid with a voucher (402, voucher, verify, token, content) ÷ the same page
 *   fetched again with its token (the middleware checks it locally), in alternating rounds.
 * In one process (agent, middleware and API share the event loop), like the payment benchmark.
 */
export async function voucherBench(): Promise<BenchResult> {
  const api = await startBenchApi();
  const publisher = await benchPublisher(api);
  const site = await benchSite(api, publisher, 'vouchers.example.com', PRICE_USD);
  await api.call('PATCH', `/v1/sites/${site.id}`, { batch_settlement: true }, publisher.auth);
  const server = await startServer.Express({
    apiUrl: api.baseUrl,
    siteId: site.id,
    siteToken: site.token,
    secret: site.secret,
  });
  try {
    const siteUrl = `http://127.0.0.1:${server.port}`;
    const { chain } = api;
    const fund = async () => {
      const account = privateKeyToAccount(generatePrivateKey());
      await api.call('POST', '/v1/dev/faucet', { address: account.address, amount_usd: '5' });
      return account;
    };
    const escrowBlock = await chain.publicClient.getBlockNumber();
    const agent = createAgent({
      account: await fund(),
      networks: [{ network: 'local', asset: chain.usdc }],
      maxPriceUsd: PRICE_USD,
      budgetUsd: '1',
      // One deposit covers every page.
      batchSettlement: { depositUsd: String(Number(PRICE_USD) * (PAGES + 10)) },
    });
    const get = async (path: string) => {
      const started = performance.now();
      const response = await agent.fetch(`${siteUrl}${path}`, { headers: { 'user-agent': GPTBOT } });
      if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
      await response.text();
      return performance.now() - started;
    };
    const voucher: number[] = [];
    const token: number[] = [];
    for (let i = 0; i < PAGES; i++) {
      voucher.push(await get(`/article/${i}`)); // a new path: a voucher (the first also deposits)
      token.push(await get(`/article/${i}`)); // the same path again: the agent sends its token
    }
    const claim = await api.claim();
    if (claim.claims.length !== 1 || claim.settles.length !== 1)
      throw new Error(`expected one claim and one settle, got ${JSON.stringify(claim)}`);
    const escrowLogs = await chain.publicClient.getLogs({
      address: X402_BATCH_SETTLEMENT_ADDRESS,
      fromBlock: escrowBlock,
    });
    const escrowTxs = new Set<Hash>(escrowLogs.map((log) => log.transactionHash!));
    const gasOf = async (hash: Hash) => (await chain.publicClient.getTransactionReceipt({ hash })).gasUsed;
    let batchGas = 0n;
    for (const hash of escrowTxs) batchGas += await gasOf(hash);

    // One exact settlement of the same price to the same publisher, relayed as the API relays them.
    const payer = await fund();
    const message = exactAuthorization({
      from: payer.address,
      to: DEV_ROLES.publisher.address,
      value: 1_000n,
      validForSeconds: MAX_AUTHORIZATION_SECONDS,
    });
    const domain = {
      name: chain.usdcName,
      version: chain.usdcVersion,
      chainId: chain.chainId,
      verifyingContract: chain.usdc,
    };
    const { r, s, yParity } = parseSignature(
      await payer.signTypedData(transferWithAuthorizationTypedData(domain, message)),
    );
    const exactHash = await chain.relayer.writeContract({
      address: chain.usdc,
      abi: USDC_ABI,
      functionName: 'transferWithAuthorization',
      args: [
        message.from,
        message.to,
        message.value,
        message.validAfter,
        message.validBefore,
        message.nonce,
        yParity + 27,
        r,
        s,
      ],
    });
    await chain.publicClient.waitForTransactionReceipt({ hash: exactHash });
    const exactGas = await gasOf(exactHash);

    const perPage = Number(batchGas) / PAGES;
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
    const latency = mean(voucher.slice(1)) / mean(token.slice(1)); // the first voucher also deposits
    const gasRatio = perPage / Number(exactGas);
    const report = [
      `### x402 batch-settlement: ${PAGES} pages from one channel (@crawlgate/agent, Express middleware, API on PostgreSQL, local chain)`,
      '',
      '| figure | ours | baseline | ratio | goal |',
      '|---|---:|---:|---:|---|',
      `| gas per paid page: deposit + claim + settle (${escrowTxs.size} transactions) ÷ ${PAGES} | ${format(perPage)} | one exact settlement: ${exactGas} | **${format(gasRatio, 3)}** | ≤ 0.05 (1/20) |`,
      `| wall time of a voucher-paid page (402, voucher, verify, content), mean of ${PAGES - 1} (p50) | ${format(mean(voucher.slice(1)), 1)} ms (${format(p50(voucher.slice(1)), 1)}) | the same page with its token: ${format(mean(token.slice(1)), 1)} ms (${format(p50(token.slice(1)), 1)}) | **${format(latency, 2)}** | ≤ 3 |`,
      '',
      `The first page also made the deposit: ${format(voucher[0], 1)} ms.`,
    ].join('\n');
    const goals = [
      {
        figure: `x402 batch-settlement: gas per paid page at ${PAGES} pages a channel ÷ one exact settlement's`,
        reached: format(gasRatio, 3),
        goal: '≤ 0.05 (1/20)',
        met: gasRatio <= 1 / 20,
      },
      {
        figure: 'a voucher-paid page ÷ the same page with its token, wall time (means)',
        reached: format(latency, 2),
        goal: '≤ 3',
        met: latency <= 3,
      },
    ];
    return { report, goals };
  } finally {
    await server.close(); // the gate too: else its refresh keeps calling the API closed below
    await api.close();
  }
}
