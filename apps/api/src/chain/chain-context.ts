import {
  getNetwork,
  X402_BATCH_SETTLEMENT_ADDRESS,
  X402_ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  type NetworkInfo,
} from '@crawlgate/core';
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  getAddress,
  http,
  type Account,
  type Address,
  type Chain,
  type LocalAccount,
  type PublicClient,
  type TransactionReceipt,
  type Transport,
  type WalletClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { ChainConfig, FeeBumpConfig } from '../config/config';
import type { LogSpan } from './log-spans';
import { createRelayerNonces, type AcrossInstances, type RelayerNonces } from './relayer-nonces';
import { batchingRpcFetch } from './rpc-batching';
import { createRpcFetch } from './rpc-fetch';

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
  /** Pays gas to settle authorizations; its transactions take their nonce from `relayerNonces`. */
  relayer: WalletClient<Transport, Chain, Account>;
  /** The one place the relayer's nonces are assigned, so overlapping settlements never collide or leave gaps. */
  relayerNonces: RelayerNonces;
  confirmations: number;
  /** How many recent blocks a search for an authorization's or a channel's events covers (RECENT_LOG_BLOCKS). */
  recentLogBlocks: bigint;
  /** The widest eth_getLogs span this node answers, as far as the searches found (log-spans.ts). */
  logSpan: LogSpan;
  settlementTimeoutMs: number;
  /** When and up to what fees a stuck relayer transaction is sent again (fee-bump.ts). */
  feeBump: FeeBumpConfig;
  /** x402 batch-settlement; null when this API has no claim authorizer (sites cannot turn it on). */
  batchSettlement: BatchSettlementChain | null;
}

export interface BatchSettlementChain {
  escrow: Address;
  /** The EIP-3009 deposit collector deposits go through (x402's, next to x402's escrow). */
  collector: Address;
  /** Every channel's receiverAuthorizer: signs claim batches, which the relayer sends. */
  authorizer: LocalAccount;
  withdrawDelaySeconds: number;
}

export interface ChainContextOptions {
  config: ChainConfig;
  rpcUrl: string;
  relayerPrivateKey: `0x${string}`;
  /** Where USDC lives; required on `local`, where it is deployed at start. */
  usdc?: Address;
  /** Signs claim batches; without it batch settlement is off. */
  claimAuthorizerPrivateKey?: `0x${string}`;
  /** Takes turns with the other API instances on the relayer's key (relayerBroadcastTurn); default: none. */
  relayerTurn?: AcrossInstances;
}

export function createChainContext({
  config,
  rpcUrl,
  relayerPrivateKey,
  usdc,
  claimAuthorizerPrivateKey,
  relayerTurn,
}: ChainContextOptions): ChainContext {
  const network = getNetwork(config.network);
  const address = config.usdcAddress ?? usdc ?? network.usdc.address;
  if (!address) throw new Error(`No USDC address for ${network.name}: set USDC_ADDRESS`);
  const chain = defineChain({
    id: network.chainId,
    name: `crawlgate-${network.name}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  // Reads made together share one HTTP request (a JSON-RPC batch): a payment's checks and the many
  // settlements in flight under load cost the node, and this process, fewer round trips. Batched by
  // batchingRpcFetch, not viem, whose batches wait on a timer (a millisecond at least, per read).
  const fetchFn = createRpcFetch();
  const reads = http(rpcUrl, { timeout: config.rpcTimeoutMs, retryCount: 1, fetchFn: batchingRpcFetch(fetchFn) });
  // Broadcasts alone, never batched: whether a failed one may have landed is judged by its own request.
  // Never retried by viem: a resend after a lost answer finds its own transaction mined ("nonce too
  // low"), which the relayer reads as a nonce another took, and would sign the settlement again.
  const writes = http(rpcUrl, { timeout: config.rpcTimeoutMs, retryCount: 0, fetchFn });
  const publicClient = createPublicClient({ chain, transport: reads, pollingInterval: config.pollingIntervalMs });
  // No viem nonce manager: its default is one per process that remembers nonces across chains
  // (a restarted anvil with the same id got nonces far ahead of its count, and every settlement stuck).
  const account = privateKeyToAccount(relayerPrivateKey);
  return {
    network,
    rpcUrl,
    chainId: network.chainId,
    usdc: getAddress(address),
    usdcName: network.usdc.name,
    usdcVersion: network.usdc.version,
    publicClient,
    relayer: createWalletClient({ account, chain, transport: writes, pollingInterval: config.pollingIntervalMs }),
    relayerNonces: createRelayerNonces(
      () => publicClient.getTransactionCount({ address: account.address, blockTag: 'pending' }),
      relayerTurn,
    ),
    confirmations: config.confirmations,
    recentLogBlocks: BigInt(config.recentLogBlocks),
    logSpan: { blocks: BigInt(config.recentLogBlocks), widest: BigInt(config.recentLogBlocks) },
    settlementTimeoutMs: config.settlementTimeoutMs,
    feeBump: config.feeBump,
    batchSettlement: batchSettlementChain(
      config,
      claimAuthorizerPrivateKey ?? config.batchSettlement.claimAuthorizerPrivateKey,
    ),
  };
}

function batchSettlementChain(
  config: ChainConfig,
  authorizerKey: `0x${string}` | undefined,
): BatchSettlementChain | null {
  if (!authorizerKey) return null;
  const escrow = getAddress(config.batchSettlement.escrow ?? X402_BATCH_SETTLEMENT_ADDRESS);
  return {
    escrow,
    // x402's collector only serves x402's escrow; ours (a normal deployment) would need its own.
    collector: getAddress(X402_ERC3009_DEPOSIT_COLLECTOR_ADDRESS),
    authorizer: privateKeyToAccount(authorizerKey),
    withdrawDelaySeconds: config.batchSettlement.withdrawDelaySeconds,
  };
}

/** Refuses to start against an RPC endpoint of another chain than the configured network's. */
export async function assertChainId(context: ChainContext): Promise<void> {
  const actual = await context.publicClient.getChainId();
  if (actual !== context.chainId) {
    throw new Error(`RPC_URL serves chain ${actual}, but ${context.network.name} is chain ${context.chainId}`);
  }
}

/** The first of the recent blocks (the last chain.recentLogBlocks up to `head`) a search for events covers. */
export function firstRecentBlock(chain: Pick<ChainContext, 'recentLogBlocks'>, head: bigint): bigint {
  return head >= chain.recentLogBlocks ? head - chain.recentLogBlocks + 1n : 0n;
}

/** The newest block with `confirmations` confirmations when `head` is the latest (itself one). */
export function confirmedBlock(head: bigint, confirmations: number): bigint {
  const block = head - BigInt(confirmations) + 1n;
  return block > 0n ? block : 0n;
}

/** Whether a transaction mined in `block` has `confirmations` confirmations when `head` is the latest (itself one). */
export function hasConfirmations(head: bigint, block: bigint, confirmations: number): boolean {
  return head - block + 1n >= BigInt(confirmations);
}

/** Whether a receipt has the configured confirmations, by the node's latest block read now. */
export async function hasConfirmationsNow(
  chain: Pick<ChainContext, 'publicClient' | 'confirmations'>,
  receipt: Pick<TransactionReceipt, 'blockNumber'>,
): Promise<boolean> {
  return hasConfirmations(
    await chain.publicClient.getBlockNumber({ cacheTime: 0 }),
    receipt.blockNumber,
    chain.confirmations,
  );
}

/** The newest block with the configured confirmations, from the node's latest block read now. */
export async function confirmedBlockNow(chain: Pick<ChainContext, 'publicClient' | 'confirmations'>): Promise<bigint> {
  return confirmedBlock(await chain.publicClient.getBlockNumber({ cacheTime: 0 }), chain.confirmations);
}
