import { encodeFunctionData, keccak256, type Address, type Hash, type Hex, type TransactionReceipt } from 'viem';
import type { ChainContext } from '../chain/chain-context';
import { pendingTooLong, planFeeBump, type Fees, type Replacement } from '../chain/fee-bump';
import { ownReceipt } from '../chain/transaction-state';
import { settlementCall, type SignedAuthorization } from './authorization-checks';
import { BroadcastFailed } from './chain-errors';

/** A call from the relayer with its gas and fees, ready to be signed with a nonce and broadcast. */
export interface RelayerCall {
  type: 'eip1559';
  chainId: number;
  to: Address;
  data: Hex;
  gas: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/** transferWithAuthorization from the relayer, with its gas and fees (estimating the gas runs the call: it fails if the call would revert). */
export function prepareSettlement(chain: ChainContext, auth: SignedAuthorization): Promise<RelayerCall> {
  return prepareRelayerCall(chain, chain.usdc, encodeFunctionData(settlementCall(chain, auth)));
}

/** Broadcasts transferWithAuthorization from the relayer; the hash is known once the node accepts it. */
export async function sendSettlement(
  chain: ChainContext,
  auth: SignedAuthorization,
  beforeBroadcast?: BeforeBroadcast,
): Promise<Hash> {
  return broadcastFromRelayer(chain, await prepareSettlement(chain, auth), beforeBroadcast);
}

/** Broadcasts a call from the relayer (settlements, escrow deposits, claims); the hash once the node accepts it. */
export async function sendFromRelayer(chain: ChainContext, to: Address, data: Hex): Promise<Hash> {
  return broadcastFromRelayer(chain, await prepareRelayerCall(chain, to, data));
}

/**
 * Gas added to every estimate: the estimate is exact for the state it ran on, and a balance emptied
 * before ours is mined (the payee sweeping its payouts: a write from zero costs ~17k more) made a
 * settlement run out of gas, a revert blamed on its payer (RelayRefusalsStore). Unused gas is not paid.
 */
export const RELAYER_GAS_MARGIN = 30_000n;

/** Gas and fees first, side by side with other settlements: the nonce is held only to sign and broadcast. */
export async function prepareRelayerCall(chain: ChainContext, to: Address, data: Hex): Promise<RelayerCall> {
  const request = await chain.relayer.prepareTransactionRequest({
    to,
    data,
    type: 'eip1559',
    parameters: ['fees', 'gas'],
  });
  return {
    type: 'eip1559',
    chainId: chain.chainId,
    to,
    data,
    gas: request.gas + RELAYER_GAS_MARGIN,
    maxFeePerGas: request.maxFeePerGas,
    maxPriorityFeePerGas: request.maxPriorityFeePerGas,
  };
}

/**
 * Runs once a transaction is signed, before it is sent, with the hash and nonce it will have: a
 * record of it written then outlives any answer the broadcast gets. Throwing sends nothing.
 */
export type BeforeBroadcast = (hash: Hash, nonce: number) => Promise<void>;

/** Signs a prepared call with the relayer's next nonce and broadcasts it; a failed broadcast is a BroadcastFailed. */
export function broadcastFromRelayer(
  chain: ChainContext,
  call: RelayerCall,
  beforeBroadcast?: BeforeBroadcast,
): Promise<Hash> {
  // Signed by the local key: the wallet client's signTransaction would ask the node for its chain id
  // again, a round trip inside the one step that runs a broadcast at a time.
  return chain.relayerNonces.send(async (nonce) => {
    const signed = await chain.relayer.account.signTransaction!({ ...call, nonce });
    await beforeBroadcast?.(keccak256(signed), nonce);
    return sendSignedFromRelayer(chain, signed);
  });
}

/**
 * What re-pricing a relayer transaction did: nothing (`waiting`: not pending long enough, no longer
 * pending, or priced as the chain asks), nothing at the maximum fee (`capped`, what the chain asks),
 * or it sent `hash` in its place.
 */
export type Repricing =
  { kind: 'waiting' } | { kind: 'capped'; market: Fees } | { kind: 'replaced'; hash: Hash; fees: Fees };

/**
 * Sends the relayer's pending transaction `hash` (broadcast at `sentAt`) again at its nonce with
 * higher fees, once it has waited past RELAYER_BUMP_AFTER_SECONDS while the chain's fees outgrew
 * it: every later relayer transaction waits behind its nonce. `record` writes the new hash down
 * before it is sent (throwing sends nothing); the old one must stay recognised, as either may land.
 */
export async function repriceIfStuck(
  chain: ChainContext,
  hash: Hash,
  sentAt: Date,
  record: BeforeBroadcast,
): Promise<Repricing> {
  if (!pendingTooLong(chain, sentAt)) return { kind: 'waiting' };
  const bump = await planFeeBump(chain, hash);
  if (bump.kind === 'capped') return { kind: 'capped', market: bump.market };
  if (bump.kind !== 'replace') return { kind: 'waiting' };
  const { maxFeePerGas, maxPriorityFeePerGas } = bump.replacement;
  return {
    kind: 'replaced',
    hash: await broadcastReplacement(chain, bump.replacement, record),
    fees: { maxFeePerGas, maxPriorityFeePerGas },
  };
}

/**
 * Signs a replacement of a pending relayer transaction (its nonce, higher fees: planFeeBump) and
 * broadcasts it. Outside the nonce turn: it takes no new nonce, and the pending count others read
 * stays the same. `beforeBroadcast` records its hash first, as for any broadcast.
 */
export async function broadcastReplacement(
  chain: ChainContext,
  replacement: Replacement,
  beforeBroadcast: BeforeBroadcast,
): Promise<Hash> {
  const signed = await chain.relayer.account.signTransaction!(replacement);
  await beforeBroadcast(keccak256(signed), replacement.nonce);
  return sendSignedFromRelayer(chain, signed);
}

/** Sends a transaction the relayer signed; failing, it throws BroadcastFailed with the hash it would have on chain. */
export async function sendSignedFromRelayer(chain: ChainContext, serializedTransaction: Hex): Promise<Hash> {
  try {
    return await chain.relayer.sendRawTransaction({ serializedTransaction });
  } catch (error) {
    throw new BroadcastFailed(keccak256(serializedTransaction), error);
  }
}

/**
 * The transaction's own receipt once it has enough confirmations; null when `timeoutMs` passes
 * first, or when another transaction took its place (ownReceipt: viem answers the replacement's).
 */
export async function waitForReceipt(
  chain: ChainContext,
  hash: Hash,
  timeoutMs: number,
): Promise<TransactionReceipt | null> {
  if (timeoutMs <= 0) return null;
  try {
    return ownReceipt(
      hash,
      await chain.publicClient.waitForTransactionReceipt({
        hash,
        confirmations: chain.confirmations,
        timeout: timeoutMs,
      }),
    );
  } catch (error) {
    if ((error as { name?: unknown }).name === 'WaitForTransactionReceiptTimeoutError') return null;
    throw error;
  }
}
