import { getNetwork, type NetworkInfo } from '@crawlgate/core';
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  getAddress,
  http,
  type Account,
  type Address,
  type Chain,
  type PublicClient,
  type Transport,
  type WalletClient,
} from 'viem';
import { nonceManager, privateKeyToAccount } from 'viem/accounts';
import type { ChainConfig } from '../config/config';

/** Everything the API needs to talk to the chain payments settle on. */
export interface ChainContext {
  network: NetworkInfo;
  rpcUrl: string;
  chainId: number;
  usdc: Address;
  /** The token's EIP-712 domain name and version, as x402 `extra` carries them. */
  usdcName: string;
  usdcVersion: string;
  publicClient: PublicClient<Transport, Chain>;
  /** Pays gas to settle authorizations; its nonces are managed locally so settlements can overlap. */
  relayer: WalletClient<Transport, Chain, Account>;
  confirmations: number;
  settlementTimeoutMs: number;
}

export interface ChainContextOptions {
  config: ChainConfig;
  rpcUrl: string;
  relayerPrivateKey: `0x${string}`;
  /** Where USDC lives; required on `local`, where it is deployed at start. */
  usdc?: Address;
}

export function createChainContext({ config, rpcUrl, relayerPrivateKey, usdc }: ChainContextOptions): ChainContext {
  const network = getNetwork(config.network);
  const address = config.usdcAddress ?? usdc ?? network.usdc.address;
  if (!address) throw new Error(`No USDC address for ${network.name}: set USDC_ADDRESS`);
  const chain = defineChain({
    id: network.chainId,
    name: `crawlgate-${network.name}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const transport = http(rpcUrl, { timeout: 10_000, retryCount: 1 });
  return {
    network,
    rpcUrl,
    chainId: network.chainId,
    usdc: getAddress(address),
    usdcName: network.usdc.name,
    usdcVersion: network.usdc.version,
    publicClient: createPublicClient({ chain, transport, pollingInterval: config.pollingIntervalMs }),
    relayer: createWalletClient({
      account: privateKeyToAccount(relayerPrivateKey, { nonceManager }),
      chain,
      transport,
      pollingInterval: config.pollingIntervalMs,
    }),
    confirmations: config.confirmations,
    settlementTimeoutMs: config.settlementTimeoutMs,
  };
}

/** Refuses to start against an RPC endpoint of another chain than the configured network's. */
export async function assertChainId(context: ChainContext): Promise<void> {
  const actual = await context.publicClient.getChainId();
  if (actual !== context.chainId) {
    throw new Error(`RPC_URL serves chain ${actual}, but ${context.network.name} is chain ${context.chainId}`);
  }
}
