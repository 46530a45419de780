import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  http,
  type Account,
  type Chain,
  type PublicClient,
  type TestClient,
  type Transport,
  type WalletClient,
} from 'viem';

/** anvil seals a block within milliseconds; viem's default 4 s polling would dominate test time. */
export const DEV_POLLING_INTERVAL_MS = 20;

/** A viem chain description for a local anvil at `rpcUrl`. */
export function devChain(rpcUrl: string, chainId: number): Chain {
  return defineChain({
    id: chainId,
    name: `Crawlgate devchain ${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
    testnet: true,
  });
}

export function devPublicClient(rpcUrl: string, chainId?: number): PublicClient {
  return createPublicClient({
    chain: chainId === undefined ? undefined : devChain(rpcUrl, chainId),
    transport: http(rpcUrl),
    pollingInterval: DEV_POLLING_INTERVAL_MS,
  });
}

export function devWalletClient(
  rpcUrl: string,
  chainId: number,
  account: Account,
): WalletClient<Transport, Chain, Account> {
  return createWalletClient({
    account,
    chain: devChain(rpcUrl, chainId),
    transport: http(rpcUrl),
    pollingInterval: DEV_POLLING_INTERVAL_MS,
  });
}

export function devTestClient(rpcUrl: string): TestClient<'anvil'> {
  return createTestClient({ mode: 'anvil', transport: http(rpcUrl), pollingInterval: DEV_POLLING_INTERVAL_MS });
}
