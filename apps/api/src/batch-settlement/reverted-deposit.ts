import type { Address, Hex } from 'viem';
import type { BatchSettlementChain, ChainContext } from '../chain/chain-context';
import { authorizationSpentBy, minedPastValidity } from '../chain/escrow';
import { isAuthorizationUsed } from '../payments/authorization-checks';

/** A relayed deposit: its channel, payer, the payer's authorization nonce and amount, and its validBefore. */
export interface RelayedDeposit {
  channelId: Hex;
  payer: Address;
  nonce: Hex;
  /** Atomic units; undefined for rows written before amounts were. */
  amount?: bigint;
  validBefore?: Date;
}

/**
 * Why a relayed deposit mined in `blockNumber` reverted: 'copy' when its authorization was spent by a
 * copy's deposit (anyone may call the escrow's deposit), or no event of the token says otherwise (a
 * node's gap refuses no one); 'expired' when it was mined at or past the authorization's validBefore
 * (stuck behind fees: the payer moved nothing); 'payer' when the payer made it revert (its funds
 * moved, the authorization cancelled, or its nonce spent on something else), whose deposits are then
 * not relayed for a while. The request that sent it and the deposits' sweep judge it alike.
 */
export async function whyDepositReverted(
  chain: ChainContext,
  batch: BatchSettlementChain,
  deposit: RelayedDeposit,
  blockNumber: bigint,
): Promise<'copy' | 'expired' | 'payer'> {
  const { payer, nonce, channelId, amount, validBefore } = deposit;
  if (
    (await isAuthorizationUsed(chain, payer, nonce)) &&
    (await authorizationSpentBy(chain, batch, { payer, nonce, channelId, amount }, blockNumber)) !== 'spent-otherwise'
  )
    return 'copy';
  if (validBefore && (await minedPastValidity(chain, blockNumber, validBefore))) return 'expired';
  return 'payer';
}
