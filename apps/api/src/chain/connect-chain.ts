import type { AppConfig } from '../config/config';
import { assertChainId, createChainContext, type ChainContext } from './chain-context';
import { prepareLocalChain } from './local-chain';
import type { AcrossInstances } from './relayer-nonces';

export interface ConnectedChain {
  context: ChainContext;
  /** Stops what start-up started (the local anvil), if anything. */
  stop(): Promise<void>;
}

/**
 * The chain for `npm start`: on `local`, our own anvil and test USDC unless RPC_URL is given. The
 * relayer's broadcasts take turns with the other instances' through `relayerTurn`.
 */
export async function connectChain(config: AppConfig['chain'], relayerTurn: AcrossInstances): Promise<ConnectedChain> {
  if (config.network === 'local') {
    const local = await prepareLocalChain(config);
    const context = createChainContext({
      config,
      rpcUrl: local.rpcUrl,
      relayerPrivateKey: local.relayerPrivateKey,
      usdc: local.usdc,
      claimAuthorizerPrivateKey: local.claimAuthorizerPrivateKey,
      relayerTurn,
    });
    await assertChainId(context);
    return { context, stop: local.stop };
  }
  const context = createChainContext({
    config,
    rpcUrl: config.rpcUrl!,
    relayerPrivateKey: config.relayerPrivateKey!,
    relayerTurn,
  });
  await assertChainId(context);
  return { context, stop: async () => undefined };
}
