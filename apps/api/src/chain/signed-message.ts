import { isAddressEqual, recoverMessageAddress, size, type Address, type Hex, type PublicClient } from 'viem';
import { hasCode } from './account-code';
import type { ChainContext } from './chain-context';

/**
 * Whether `address` signed `message` (EIP-191), EOAs and smart wallets (ERC-1271, ERC-6492, ERC-8010)
 * alike; 'unchecked' when only the chain could tell and it did not answer (no answer is not a "no").
 * A plain signature by the address itself is recovered locally, with no RPC call. Anything else
 * comes after `beforeAskingChain` (a caller's bound on chain calls, which may throw): a plain
 * 65-byte signature by someone else is refused for an address with no code (an EOA signs only as
 * itself) after one code read, never a verification; the rest asks the chain (a contract wallet's
 * isValidSignature, or a wrapper for a wallet not deployed yet) through its verifyMessage.
 */
export async function signedMessageBy(
  chain: Pick<ChainContext, 'publicClient'>,
  { address, message, signature }: { address: Address; message: string; signature: Hex },
  beforeAskingChain?: () => Promise<void>,
): Promise<boolean | 'unchecked'> {
  const plain = size(signature) === 65;
  if (plain) {
    const signer = await recoverMessageAddress({ message, signature }).catch(() => undefined);
    if (signer && isAddressEqual(signer, address)) return true;
  }
  await beforeAskingChain?.();
  if (plain) {
    const code = await codeOf(chain.publicClient, address);
    if (code === 'unknown') return 'unchecked';
    if (code === 'none') return false;
  }
  // viem answers false for a node that failed the call, as for a signature that does not hold, and
  // throws alike for a node that failed and for junk it cannot parse (an ERC-8010 wrapper around
  // nothing): a "no" counts only from a node that answers right after it.
  const verified = await chain.publicClient.verifyMessage({ address, message, signature }).catch(() => false);
  if (verified) return true;
  return (await nodeAnswers(chain.publicClient)) ? false : 'unchecked';
}

async function nodeAnswers(client: PublicClient): Promise<boolean> {
  try {
    await client.getBlockNumber({ cacheTime: 0 });
    return true;
  } catch {
    return false;
  }
}

/** Whether `address` has code now ('unknown' when the node does not say). */
async function codeOf(client: PublicClient, address: Address): Promise<'some' | 'none' | 'unknown'> {
  try {
    return (await hasCode(client, address)) ? 'some' : 'none';
  } catch {
    return 'unknown';
  }
}
