import { USDC_ABI } from '@crawlgate/core';
import { encodeFunctionData, type Address } from 'viem';
import type { ChainContext } from './chain-context';
import { isRevert } from './revert';

export interface TransferProbe {
  token: Address;
  from: Address;
  to: Address;
  /** Another recipient, which no refusal of `to` alone touches (the relayer, say). */
  control: Address;
  amount: bigint;
}

/**
 * Whether the token refuses `amount` from `from` to `to` alone, as eth_calls at the latest block
 * say: the transfer to `to` reverts and the same one to `control` goes through. A refusal every
 * recipient would meet (the token paused, `from` blacklisted or short of funds) is not `to`'s: false.
 * A call that fails other than by a revert throws: the node cannot say.
 */
export async function tokenRefusesOnly(chain: ChainContext, probe: TransferProbe): Promise<boolean> {
  const transferTo = (recipient: Address) =>
    chain.publicClient
      .call({
        account: probe.from,
        to: probe.token,
        data: encodeFunctionData({ abi: USDC_ABI, functionName: 'transfer', args: [recipient, probe.amount] }),
      })
      .then(
        () => 'through' as const,
        (error: unknown) => {
          if (isRevert(error)) return 'reverted' as const;
          throw error;
        },
      );
  const [toRecipient, toControl] = await Promise.all([transferTo(probe.to), transferTo(probe.control)]);
  return toRecipient === 'reverted' && toControl === 'through';
}
