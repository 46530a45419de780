import { X402_BATCH_SETTLEMENT_ADDRESS, X402_ERC3009_DEPOSIT_COLLECTOR_ADDRESS } from '@crawlgate/core';
import type { ChainContext } from './chain-context';

type OwnAddresses = ReadonlyMap<string, string>;

const byChain = new WeakMap<ChainContext, OwnAddresses>();

/**
 * What `address` is when it is one that payments go through, never to: the token (USDC refuses a
 * transfer to its own address), an escrow or deposit collector (money sent there belongs to no
 * channel and is stranded), or this API's relayer or claim authorizer (the service never holds a
 * publisher's money). Undefined for any other address. x402's escrow and collector count wherever
 * ours stand: the local chain places ours there too.
 */
export function ownAddressRole(chain: ChainContext, address: string): string | undefined {
  let own = byChain.get(chain);
  if (!own) byChain.set(chain, (own = ownAddressesOf(chain)));
  return own.get(address.toLowerCase());
}

function ownAddressesOf(chain: ChainContext): OwnAddresses {
  const batch = chain.batchSettlement;
  const roles: [string | undefined, string][] = [
    [chain.usdc, 'the USDC token contract'],
    [X402_BATCH_SETTLEMENT_ADDRESS, "x402's batch-settlement escrow"],
    [batch?.escrow, 'the batch-settlement escrow'],
    [X402_ERC3009_DEPOSIT_COLLECTOR_ADDRESS, "the batch-settlement escrow's deposit collector"],
    [batch?.collector, "the batch-settlement escrow's deposit collector"],
    [chain.relayer.account.address, "this API's relayer (it pays gas and holds no publisher's money)"],
    [batch?.authorizer.address, "this API's claim authorizer (it signs claims and holds no publisher's money)"],
  ];
  return new Map(roles.flatMap(([address, role]) => (address ? [[address.toLowerCase(), role] as const] : [])));
}
