import { isAddressEqual, recoverMessageAddress, size, type Address, type Hex } from 'viem';
import type { ChainContext } from './chain-context';

/**
 * Whether `address` signed `message` (EIP-191), EOAs and smart wallets (ERC-1271, ERC-6492) alike;
 * 'unchecked' when only the chain could tell and it did not answer (no answer is not a "no").
 * A plain signature by the address itself is recovered locally, with no RPC call; anything else
 * asks the chain (a contract wallet's isValidSignature) through its verifyMessage, after
 * `beforeAskingChain` (a caller's bound on those calls, which may throw).
 */
export async function signedMessageBy(
  chain: Pick<ChainContext, 'publicClient'>,
  { address, message, signature }: { address: Address; message: string; signature: Hex },
  beforeAskingChain?: () => Promise<void>,
): Promise<boolean | 'unchecked'> {
  if (size(signature) === 65) {
    const signer = await recoverMessageAddress({ message, signature }).catch(() => undefined);
    if (signer && isAddressEqual(signer, address)) return true;
  }
  await beforeAskingChain?.();
  return chain.publicClient.verifyMessage({ address, message, signature }).catch(() => 'unchecked' as const);
}
