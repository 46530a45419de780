import { DEV_ROLES, deployTestUsdc, placeBatchSettlement, startAnvil } from '@crawlgate/devchain';
import { getNetwork } from '@crawlgate/core';
import type { Address } from 'viem';
import type { ChainConfig } from '../config/config';

export interface LocalChain {
  rpcUrl: string;
  usdc: Address;
  relayerPrivateKey: `0x${string}`;
  claimAuthorizerPrivateKey: `0x${string}`;
  stop(): Promise<void>;
}

/**
 * The `local` network: connect to RPC_URL or start our own anvil, then deploy the test USDC at
 * its deterministic address (reused when already there) and place the batch-settlement escrow at
 * x402's addresses (unless BATCH_SETTLEMENT_ADDRESS points elsewhere). The relayer is anvil's
 * account 0; claims are authorized by spare account 7.
 */
export async function prepareLocalChain(config: ChainConfig): Promise<LocalChain> {
  const network = getNetwork(config.network);
  const anvil = config.rpcUrl ? undefined : await startAnvil({ chainId: network.chainId });
  const rpcUrl = config.rpcUrl ?? anvil!.rpcUrl;
  const deployment = config.usdcAddress
    ? { usdc: config.usdcAddress }
    : await deployTestUsdc({
        rpcUrl,
        chainId: network.chainId,
        name: network.usdc.name,
        version: network.usdc.version,
      });
  if (!config.batchSettlement.escrow) await placeBatchSettlement({ rpcUrl });
  return {
    rpcUrl,
    usdc: deployment.usdc,
    relayerPrivateKey: config.relayerPrivateKey ?? DEV_ROLES.relayer.privateKey,
    claimAuthorizerPrivateKey: config.batchSettlement.claimAuthorizerPrivateKey ?? LOCAL_CLAIM_AUTHORIZER.privateKey,
    stop: async () => anvil?.stop(),
  };
}

/** The dev account that authorizes claims on `local` (spare account 7). */
export const LOCAL_CLAIM_AUTHORIZER = DEV_ROLES.spare[1];
