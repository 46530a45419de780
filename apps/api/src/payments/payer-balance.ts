import { USDC_ABI } from '@crawlgate/core';
import type { Address, ContractFunctionParameters, Hex } from 'viem';
import type { ChainContext } from '../chain/chain-context';
import { onChain } from './chain-errors';
import type { ClaimAhead, PaymentStore, PayerKey } from './payment.store';

/**
 * Settlements of one payer in flight at once, at most (and so how many of those confirmed last
 * payerCoverageNow counts). A payer that moves its funds ahead of them reverts every one at the
 * relayer's gas (and is then refused for a day): without a bound, an address holding $1 had a
 * thousand $0.001 settlements sent in one block, each reverted. Past it, a payment waits (503,
 * nothing charged) for one to land; volume goes through batch settlement.
 */
export const MAX_PAYER_SETTLEMENTS_IN_FLIGHT = 8;

/** What payerCoverage finds of a claim against the payer's USDC. */
export type Coverage = 'covered' | 'short' | 'spent';

/**
 * payerCoverage of `claim` (an exact settlement's, or a relayed deposit's), counting `ahead` and the
 * payer's settlements confirmed last (settledLast): a node behind one answers its balance with that
 * settlement's amount still in it, and its authorization as unused, counted then.
 */
export async function payerCoverageNow(
  chain: ChainContext,
  store: Pick<PaymentStore, 'settledLast'>,
  claim: PayerKey & ClaimAhead,
  ahead: ClaimAhead[],
): Promise<Coverage> {
  const settled = await store.settledLast(claim, MAX_PAYER_SETTLEMENTS_IN_FLIGHT);
  return onChain(() => payerCoverage(chain, claim.payer as Address, claim, [...ahead, ...settled]));
}

/**
 * Whether the payer's USDC covers `claim` and every one of `others` that has not yet moved money
 * ('covered', else 'short'): the relayer never pays gas for a settlement bound to revert. One of
 * `others` whose authorization is used already took its money from the balance, so it is not
 * counted twice; one settled that reads as unused was read on a node that has not reached it, whose
 * balance still holds its amount. 'spent': the claim's own authorization is used already (a copy of
 * it mined), so sending it would revert and its money may have paid its gate.
 */
export async function payerCoverage(
  chain: ChainContext,
  payer: Address,
  claim: ClaimAhead,
  others: ClaimAhead[],
): Promise<Coverage> {
  // Each authorization once: a claim read in flight may since be among those confirmed last. An
  // authorization claim always has its nonce; one without is not an authorization's to read.
  const counted = [...new Map(others.map((other) => [other.nonce, other])).values()].filter(
    (other) => other.nonce !== null && other.nonce !== claim.nonce,
  );
  // The balance and the authorizations in one eth_call (a deployless multicall, one chunk): one state.
  // Read one after the other, a later `latest` need not be a later state: anvil, mid-mine, answers
  // a call it resolved to the block before from that block's stored state after an earlier call
  // read the new one, and a node behind a load balancer may lag the one that answered first. A
  // claim read as used beside a balance from before it: a doomed settlement was broadcast.
  const balanceOf = { address: chain.usdc, abi: USDC_ABI, functionName: 'balanceOf', args: [payer] } as const;
  const states = [claim, ...counted].map(
    (one) =>
      ({
        address: chain.usdc,
        abi: USDC_ABI,
        functionName: 'authorizationState',
        args: [payer, one.nonce as Hex],
      }) as const,
  );
  const [balance, spent, ...used] = (await chain.publicClient.multicall({
    deployless: true,
    batchSize: 0,
    allowFailure: false,
    contracts: [balanceOf, ...states] as ContractFunctionParameters[],
  })) as [bigint, boolean, ...boolean[]];
  if (spent) return 'spent';
  const unsettled = counted.reduce((sum, other, i) => sum + (used[i] ? 0n : other.amount), claim.amount);
  return balance >= unsettled ? 'covered' : 'short';
}
