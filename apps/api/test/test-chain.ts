import { DEV_ROLES, devTestClient } from '@crawlgate/devchain';
import { serializeTransaction, type Hex, type Transaction } from 'viem';
import { createChainContext, type ChainContext } from '../src/chain/chain-context';
import type { AcrossInstances } from '../src/chain/relayer-nonces';
import { LOCAL_CLAIM_AUTHORIZER } from '../src/chain/local-chain';
import { loadConfig, type ChainConfig } from '../src/config/config';
import type { TestChain } from './global-setup';

/** A gwei in wei: the unit the fee specs speak. */
export const GWEI = 1_000_000_000n;

/**
 * The relayer's fee maxima as the tests' apps run them: the defaults of RELAYER_MAX_FEE_PER_GAS_WEI
 * (10 gwei) and RELAYER_URGENT_MAX_FEE_PER_GAS_WEI (ten times it).
 */
export const { maxFeePerGas: ROUTINE_FEE_CAP, urgentMaxFeePerGas: URGENT_FEE_CAP } = loadConfig({}).chain.feeBump;

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

/**
 * A context on this worker's chain; `rpcUrl` points it elsewhere (an unreachable port, say). An
 * app's takes turns with the other instances on its database (`relayerTurn`), as `npm start`'s does.
 */
export function testChainContext(
  config: ChainConfig = testChainConfig(),
  rpcUrl = workerChain().rpcUrl,
  relayerTurn?: AcrossInstances,
): ChainContext {
  return createChainContext({
    relayerTurn,
    config,
    rpcUrl,
    relayerPrivateKey: DEV_ROLES.relayer.privateKey,
    usdc: workerChain().usdc,
    // A test may give the claim authorizer another key (a rotation).
    claimAuthorizerPrivateKey: config.batchSettlement.claimAuthorizerPrivateKey ?? LOCAL_CLAIM_AUTHORIZER.privateKey,
  });
}

/**
 * Ends a fee spike a test made on its chain: automine on, and blocks mined at a base fee of 1 wei
 * until the node's fee estimate is under half of RELAYER_MAX_FEE_PER_GAS_WEI's default again, or it
 * throws saying what the chain shows. One anvil_setNextBlockBaseFeePerGas and one block were not
 * always enough: once in a few runs the blocks after a spike kept its base fee (15 gwei, decaying
 * 12.5 % a block), and the next test, or the next spec file on this worker's chain, had its
 * payments refused as above the relayer's maximum (503).
 */
export async function endFeeSpike(chain: Pick<ChainContext, 'rpcUrl' | 'publicClient'>): Promise<void> {
  const test = devTestClient(chain.rpcUrl);
  await test.setAutomine(true);
  const calm = loadConfig({}).chain.feeBump.maxFeePerGas / 2n;
  for (let block = 0; block < 5; block++) {
    // Set again before each block: a block mined meanwhile (a transaction, under automine) takes it.
    await test.setNextBlockBaseFeePerGas({ baseFeePerGas: 1n });
    await test.mine({ blocks: 1 });
    if ((await chain.publicClient.estimateFeesPerGas()).maxFeePerGas < calm) return;
  }
  const [block, tip, pool] = await Promise.all([
    chain.publicClient.getBlock({ blockTag: 'latest' }),
    chain.publicClient.estimateMaxPriorityFeePerGas(),
    test.getTxpoolStatus(),
  ]);
  throw new Error(
    `the chain's fee estimate stayed at ${calm} wei per gas or more after 5 blocks: base fee ${block.baseFeePerGas}, suggested tip ${tip}, ${block.transactions.length} transaction(s) in the last block, ${pool.pending} pending, ${pool.queued} queued`,
  );
}

/**
 * An EIP-1559 transaction the node returned, serialized as it was signed (same hash): to broadcast
 * again once the node dropped it from its pool, as anvil does under a base fee above its fee.
 */
export function signedTransactionOf(tx: Transaction): Hex {
  return serializeTransaction(
    {
      type: 'eip1559',
      chainId: tx.chainId!,
      nonce: tx.nonce,
      to: tx.to!,
      data: tx.input,
      value: tx.value,
      gas: tx.gas,
      maxFeePerGas: tx.maxFeePerGas!,
      maxPriorityFeePerGas: tx.maxPriorityFeePerGas!,
      accessList: tx.accessList ?? [],
    },
    { r: tx.r, s: tx.s, yParity: tx.yParity! },
  );
}
