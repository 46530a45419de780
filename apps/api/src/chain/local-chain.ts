import { DEV_ROLES, deployTestUsdc, startAnvil } from '@crawlgate/devchain';
import { getNetwork } from '@crawlgate/core';
import type { Address } from 'viem';
import type { ChainConfig } from '../config/config';

export interface LocalChain {
  rpcUrl: string;
  usdc: Address;
  relayerPrivateKey: `0x${string}`;
  stop(): Promise<void>;
}

/**
 * The `local` network: connect to RPC_URL or start our own anvil, then deploy the test USDC at
 * its deterministic address (reused when already there). The relayer is anvil's account 0.
 */
export async function prepareLocalChain(config: ChainConfig): Promise<LocalChain> {
  const network = getNetwork(config.network);
  const anvil = config.rpcUrl ? undefined : await startAnvil({ chainId: network.chainId });
  const rpcUrl = config.rpcUrl ?? anvil!.rpcUrl;
  const deployment = config.usdcAddress
    ? { usdc: config.usdcAddress }
    : await deployTestUsdc({ rpcUrl, chainId: network.chainId, name: network.usdc.name, version: network.usdc.version });
  return {
    rpcUrl,
    usdc: deployment.usdc,
    relayerPrivateKey: config.relayerPrivateKey ?? DEV_ROLES.relayer.privateKey,
    stop: async () => anvil?.stop(),
  };
}
