/*
 * An agent in a process of its own, for the channel file's restart test: pays the pages in PAGES
 * (JSON: URLs) with vouchers, keeping its channels in CHANNEL_FILE, prints one line per page
 * (its status), then waits to be killed (a crash: it never exits on its own).
 */

import { privateKeyToAccount } from 'viem/accounts';
import { createAgent } from '../../../../libs/agent-sdk/src';

async function main(): Promise<void> {
  const env = (name: string) => process.env[name] ?? '';
  const agent = createAgent({
    account: privateKeyToAccount(env('PRIVATE_KEY') as `0x${string}`),
    maxPriceUsd: '0.05',
    budgetUsd: '2',
    networks: [{ network: 'local', asset: env('USDC') as `0x${string}` }],
    rpcUrl: env('RPC_URL'),
    pollingIntervalMs: 20,
    batchSettlement: { depositUsd: '0.5', channelFile: env('CHANNEL_FILE') },
  });
  for (const url of JSON.parse(env('PAGES')) as string[]) {
    const response = await agent.fetch(url, { headers: { 'user-agent': env('USER_AGENT') } });
    process.stdout.write(`${response.status}\n`);
  }
  setInterval(() => undefined, 60_000); // held open until killed
}

main().catch((error) => {
  process.stdout.write(`error ${error instanceof Error ? error.message : String(error)}\n`);
});
