import { encodeFunctionData, keccak256, type Address, type Hash, type Hex, type TransactionReceipt } from 'viem';
import type { ChainContext } from '../chain/chain-context';
import { aboveCap, feeCap, type FeeUrgency } from '../chain/fee-bump';
import { sendSignedFromRelayer, type BeforeBroadcast } from '../chain/relayer-broadcast';
import { RelayerTurnNotHad, type RelayerTurn } from '../chain/relayer-nonces';
import { ownReceipt } from '../chain/transaction-state';
import { settlementCall, type SignedAuthorization } from './authorization-checks';
import { chainUnavailable } from './chain-errors';

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
  return broadcastFromRelayer(chain, await prepareSettlement(chain, auth), { payee: auth.to }, beforeBroadcast);
}

/** Broadcasts a call from the relayer in `to`'s turn (tests' transactions of their own); the hash once the node accepts it. */
export async function sendFromRelayer(chain: ChainContext, to: Address, data: Hex): Promise<Hash> {
  return broadcastFromRelayer(chain, await prepareRelayerCall(chain, to, data), { payee: to });
}

/**
 * Gas added to every estimate: the estimate is exact for the state it ran on, and a balance emptied
 * before ours is mined (the payee sweeping its payouts: a write from zero costs ~17k more) made a
 * settlement run out of gas, a revert blamed on its payer (RelayRefusalsStore). Unused gas is not paid.
 */
export const RELAYER_GAS_MARGIN = 30_000n;

/** When a request refused for fees above the cap is told to come back: a fee spike lasts minutes, not seconds. */
const FEES_ABOVE_CAP_RETRY_SECONDS = 30;

/** Gas and fees first, side by side with other settlements: the nonce is held only to sign and broadcast. */
export async function prepareRelayerCall(chain: ChainContext, to: Address, data: Hex): Promise<RelayerCall> {
  const request = await chain.relayer.prepareTransactionRequest({
    to,
    data,
    type: 'eip1559',
    parameters: ['fees', 'gas'],
  });
  return relayerCall(chain, to, data, request.gas + RELAYER_GAS_MARGIN, request);
}

/**
 * A call from the relayer at `fees` already checked within the maximum (assertFeesWithinCap): only
 * its gas is asked of the node (estimating runs the call: it fails if the call would revert).
 * prepareRelayerCall lets viem price the call again (eth_fillTransaction where the node has it:
 * geth fills at twice the base fee), so the fees checked would not be the fees sent.
 */
export async function relayerCallAtFees(
  chain: ChainContext,
  to: Address,
  data: Hex,
  fees: Pick<RelayerCall, 'maxFeePerGas' | 'maxPriorityFeePerGas'>,
): Promise<RelayerCall> {
  const gas = await chain.publicClient.estimateGas({ account: chain.relayer.account.address, to, data });
  return relayerCall(chain, to, data, gas + RELAYER_GAS_MARGIN, fees);
}

/** The call of `data` to `to` from the relayer, with the gas and fees given. */
export function relayerCall(
  chain: Pick<ChainContext, 'chainId'>,
  to: Address,
  data: Hex,
  gas: bigint,
  fees: Pick<RelayerCall, 'maxFeePerGas' | 'maxPriorityFeePerGas'>,
): RelayerCall {
  return {
    type: 'eip1559',
    chainId: chain.chainId,
    to,
    data,
    gas,
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
  };
}

/**
 * No relayer transaction is first sent offering more per gas than the maximum of its `urgency`
 * (feeCap: RELAYER_MAX_FEE_PER_GAS_WEI, or RELAYER_URGENT_MAX_FEE_PER_GAS_WEI for an urgent claim):
 * at such fees this throws the 503 of chain trouble (chainUnavailable), which a request answers with
 * nothing sent, and a background job logs, to try again at its next run.
 */
export function assertFeesWithinCap(
  chain: ChainContext,
  fees: Pick<RelayerCall, 'maxFeePerGas'>,
  urgency: FeeUrgency = 'routine',
): void {
  const cap = feeCap(chain, urgency);
  if (aboveCap(cap, fees))
    throw chainUnavailable(
      `The payment network asks ${fees.maxFeePerGas} wei per gas, more than the relayer pays (${cap.setting}, ${cap.maxFeePerGas}): nothing is sent until its fees fall`,
      FEES_ABOVE_CAP_RETRY_SECONDS,
    );
}

/**
 * Signs a prepared call with the relayer's next nonce, in its `turn`, and broadcasts it; a failed
 * broadcast is a BroadcastFailed. A call priced above the maximum fee of its `urgency` is not signed
 * (assertFeesWithinCap).
 */
export async function broadcastFromRelayer(
  chain: ChainContext,
  call: RelayerCall,
  turn: RelayerTurn,
  beforeBroadcast?: BeforeBroadcast,
  urgency: FeeUrgency = 'routine',
): Promise<Hash> {
  assertFeesWithinCap(chain, call, urgency);
  // Signed by the local key: the wallet client's signTransaction would ask the node for its chain id
  // again, a round trip inside the one step that runs a broadcast at a time.
  return chain.relayerNonces
    .send(async (nonce) => {
      const signed = await chain.relayer.account.signTransaction!({ ...call, nonce });
      await beforeBroadcast?.(keccak256(signed), nonce);
      return sendSignedFromRelayer(chain, signed);
    }, turn)
    .catch((error: unknown) => {
      // Nothing was signed: answered as any broadcast refused before it (the fee cap's).
      if (error instanceof RelayerTurnNotHad)
        throw Object.assign(chainUnavailable(`The relayer could not broadcast: ${error.message}`, 1), { cause: error });
      throw error;
    });
}

/**
 * Whether the receipt of another transaction mined at our transaction's nonce (viem answers a
 * replacement's as if it were ours) does our transaction's work all the same: a re-priced copy of it.
 */
export type IsOwnReplacement = (receipt: TransactionReceipt) => Promise<boolean>;

/**
 * The transaction's own receipt once it has enough confirmations; null when `timeoutMs` passes
 * first, or when another transaction took its place (ownReceipt), unless `isOwnReplacement` says
 * that one is ours too.
 */
export async function waitForReceipt(
  chain: ChainContext,
  hash: Hash,
  timeoutMs: number,
  isOwnReplacement: IsOwnReplacement = () => Promise.resolve(false),
): Promise<TransactionReceipt | null> {
  if (timeoutMs <= 0) return null;
  try {
    const receipt = await chain.publicClient.waitForTransactionReceipt({
      hash,
      confirmations: chain.confirmations,
      timeout: timeoutMs,
    });
    return ownReceipt(hash, receipt) ?? ((await isOwnReplacement(receipt)) ? receipt : null);
  } catch (error) {
    if ((error as { name?: unknown }).name === 'WaitForTransactionReceiptTimeoutError') return null;
    throw error;
  }
}
