import { USDC_ABI } from '@crawlgate/core';
import type { Address, ContractFunctionParameters, Hex } from 'viem';
import type { ChainContext } from '../chain/chain-context';
import type { ClaimAhead } from './payment.store';

/**
 * True when the payer's USDC covers `amount` and every one of `claims` that has not yet moved
 * money: the relayer never pays gas for a settlement bound to revert. A claim whose authorization is
 * used already took its money from the balance, so it is not counted twice; one settled that reads as
 * unused was read on a node that has not reached it, whose balance still holds its amount.
 */
export async function balanceCovers(
  chain: ChainContext,
  payer: Address,
  amount: bigint,
  claims: ClaimAhead[],
): Promise<boolean> {
  // Each authorization once: a claim read in flight may since be among those confirmed last.
  const inFlight = [...new Map(claims.map((claim) => [claim.nonce, claim])).values()];
  // The claims and the balance in one eth_call (a deployless multicall, one chunk): one state.
  // Read one after the other, a later `latest` need not be a later state: anvil, mid-mine, answers
  // a call it resolved to the block before from that block's stored state after an earlier call
  // read the new one, and a node behind a load balancer may lag the one that answered first. A
  // claim read as used beside a balance from before it: a doomed settlement was broadcast.
  const balanceOf = { address: chain.usdc, abi: USDC_ABI, functionName: 'balanceOf', args: [payer] } as const;
  const states = inFlight.map(
    (claim) =>
      ({
        address: chain.usdc,
        abi: USDC_ABI,
        functionName: 'authorizationState',
        args: [payer, claim.nonce as Hex],
      }) as const,
  );
  const [balance, ...used] = (await chain.publicClient.multicall({
    deployless: true,
    batchSize: 0,
    allowFailure: false,
    contracts: [balanceOf, ...states] as ContractFunctionParameters[],
  })) as [bigint, ...boolean[]];
  const unsettled = inFlight.reduce((sum, claim, i) => sum + (used[i] ? 0n : claim.amount), amount);
  return balance >= unsettled;
}
