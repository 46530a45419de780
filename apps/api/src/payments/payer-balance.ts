import { USDC_ABI } from '@crawlgate/core';
import type { Address, Hex } from 'viem';
import type { ChainContext } from '../chain/chain-context';
import { isAuthorizationUsed } from './authorization-checks';
import type { ClaimAhead } from './payment.store';

/**
 * True when the payer's USDC covers `amount` and every claim of `inFlight` that has not yet moved
 * money: the relayer never pays gas for a settlement bound to revert. A claim whose authorization is
 * used already took its money from the balance, so it is not counted twice.
 */
export async function balanceCovers(
  chain: ChainContext,
  payer: Address,
  amount: bigint,
  inFlight: ClaimAhead[],
): Promise<boolean> {
  // The claims first, the balance after: a claim seen as used has left the balance read later.
  // Read together (one batch), a transfer mined between the two reads was seen as used but not yet
  // taken from the balance, and a doomed settlement was broadcast.
  const unsettled = await Promise.all(
    inFlight.map(async (claim) => ((await isAuthorizationUsed(chain, payer, claim.nonce as Hex)) ? 0n : claim.amount)),
  );
  const balance = await chain.publicClient.readContract({
    address: chain.usdc,
    abi: USDC_ABI,
    functionName: 'balanceOf',
    args: [payer],
  });
  return balance >= unsettled.reduce((sum, one) => sum + one, amount);
}
