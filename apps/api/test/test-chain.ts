import { DEV_ROLES } from '@crawlgate/devchain';
import { createChainContext, type ChainContext } from '../src/chain/chain-context';
import { LOCAL_CLAIM_AUTHORIZER } from '../src/chain/local-chain';
import { loadConfig, type ChainConfig } from '../src/config/config';
import type { TestChain } from './global-setup';

/** This jest worker's local chain, started by the global set-up. */
export function workerChain(): TestChain {
  const chains = JSON.parse(process.env.CRAWLGATE_TEST_CHAINS ?? '[]') as TestChain[];
  if (chains.length === 0) throw new Error('No test chain: is the api jest global set-up configured?');
  return chains[(Number(process.env.JEST_WORKER_ID ?? '1') - 1) % chains.length];
}

/** Chain settings for tests: fast polling, background jobs off unless a test turns them on. */
export function testChainConfig(overrides: Partial<ChainConfig> = {}): ChainConfig {
  const base = loadConfig({}).chain;
  return {
    ...base,
    pollingIntervalMs: 20,
    reconcileIntervalMs: 0,
    settlementTimeoutMs: 20_000,
    batchSettlement: { ...base.batchSettlement, claimIntervalMs: 0 },
    ...overrides,
  };
}

/** A context on this worker's chain; `rpcUrl` points it elsewhere (an unreachable port, say). */
export function testChainContext(config: ChainConfig = testChainConfig(), rpcUrl = workerChain().rpcUrl): ChainContext {
  return createChainContext({
    config,
    rpcUrl,
    relayerPrivateKey: DEV_ROLES.relayer.privateKey,
    usdc: workerChain().usdc,
    // A test may give the claim authorizer another key (a rotation).
    claimAuthorizerPrivateKey: config.batchSettlement.claimAuthorizerPrivateKey ?? LOCAL_CLAIM_AUTHORIZER.privateKey,
  });
}
