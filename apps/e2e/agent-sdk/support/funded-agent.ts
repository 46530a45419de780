import type { TestApp } from '../../../../apps/api/test/test-app';
import { fundUsdc, newWallet } from '../../../../apps/api/test/test-agent';
import { createAgent, type AgentOptions } from '../../../../libs/agent-sdk/src';

/**
 * An agent paying on `app`'s local chain with a budget of 0.05 USD (0.05 at most a page), from a
 * wallet of its own holding 1 USDC; `options` over those. `withChain`: it may read the chain
 * (rpcUrl), as the watch of refused and lost payments needs.
 */
export async function fundedAgent(
  app: TestApp,
  { withChain = true, ...options }: Partial<AgentOptions> & { withChain?: boolean } = {},
) {
  const wallet = newWallet();
  await fundUsdc(app, wallet.address, '1');
  const agent = createAgent({
    account: wallet,
    maxPriceUsd: '0.05',
    budgetUsd: '0.05',
    networks: [{ network: 'local', asset: app.chain.usdc }],
    ...(withChain && { rpcUrl: app.chain.rpcUrl }),
    pollingIntervalMs: 20,
    ...options,
  });
  return { wallet, agent };
}
