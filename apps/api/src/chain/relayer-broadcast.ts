import { keccak256, type Hash, type Hex } from 'viem';
import type { ChainContext } from './chain-context';

/**
 * Runs once a transaction is signed, before it is sent, with the hash and nonce it will have: a
 * record of it written then outlives any answer the broadcast gets. Throwing sends nothing.
 */
export type BeforeBroadcast = (hash: Hash, nonce: number) => Promise<void>;

/**
 * A signed transaction of the relayer whose broadcast failed. `hash` is known before sending (the
 * keccak of the signed transaction): the one it has on chain if the node took it after all.
 */
export class BroadcastFailed extends Error {
  constructor(
    readonly hash: Hash,
    cause: unknown,
  ) {
    // The node's words kept in the message: the relayer's nonce step reads "nonce too low" there.
    super(`Broadcast of ${hash} failed: ${(cause as { message?: unknown })?.message ?? String(cause)}`, { cause });
    this.name = 'BroadcastFailed';
  }
}

/** Sends a transaction the relayer signed; failing, it throws BroadcastFailed with the hash it would have on chain. */
export async function sendSignedFromRelayer(chain: ChainContext, serializedTransaction: Hex): Promise<Hash> {
  try {
    return await chain.relayer.sendRawTransaction({ serializedTransaction });
  } catch (error) {
    throw new BroadcastFailed(keccak256(serializedTransaction), error);
  }
}
