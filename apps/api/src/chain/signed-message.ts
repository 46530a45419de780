import {
  hashMessage,
  isAddressEqual,
  numberToHex,
  recoverMessageAddress,
  size,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { verifyHash } from 'viem/actions';
import { hasCode } from './account-code';
import type { ChainContext } from './chain-context';
import { isExecutionHalt, isRevert } from './revert';

/** An EIP-191 message, the address said to have signed it, and the signature. */
export interface SignedMessage {
  address: Address;
  message: string;
  signature: Hex;
}

/** Whether `signature` is `address`'s own plain (ECDSA) signature of `message`: recovered here, no RPC call. */
export async function signedLocally({ address, message, signature }: SignedMessage): Promise<boolean> {
  if (size(signature) !== 65) return false;
  const signer = await recoverMessageAddress({ message, signature }).catch(() => undefined);
  return signer !== undefined && isAddressEqual(signer, address);
}

/**
 * Whether `address` signed `message` (EIP-191), EOAs and smart wallets (ERC-1271, ERC-6492, ERC-8010)
 * alike; 'unchecked' when only the chain could tell and a call to it failed (a failure is not a "no").
 * A plain signature by the address itself is recovered locally, with no RPC call. Anything else
 * comes after `beforeAskingChain` (a caller's bound on chain calls, which may throw): a plain
 * 65-byte signature by someone else is refused for an address with no code (an EOA signs only as
 * itself) after one code read, never a verification; the rest asks the chain (a contract wallet's
 * isValidSignature, or a wrapper for a wallet not deployed yet) through viem's verifyHash.
 */
export async function signedMessageBy(
  chain: Pick<ChainContext, 'publicClient'>,
  { address, message, signature }: SignedMessage,
  beforeAskingChain?: () => Promise<void>,
): Promise<boolean | 'unchecked'> {
  if (await signedLocally({ address, message, signature })) return true;
  await beforeAskingChain?.();
  const plain = size(signature) === 65;
  if (plain) {
    const code = await codeOf(chain.publicClient, address);
    if (code === 'unknown') return 'unchecked';
    if (code === 'none') return false;
  }
  return signedOnChain(chain, { address, message, signature });
}

/**
 * Whether the chain says `address` signed `message`: a contract wallet's isValidSignature, or a
 * wrapper's (ERC-6492, ERC-8010), through viem's verifyHash, with no local recovery or code read
 * first (signedMessageBy's, for a caller that made them). 'unchecked' when a call to it failed.
 */
export async function signedOnChain(
  chain: Pick<ChainContext, 'publicClient'>,
  { address, message, signature }: SignedMessage,
): Promise<boolean | 'unchecked'> {
  // viem answers false for any failed eth_call (a node's rate limit as much as the wallet's revert),
  // and throws alike for junk it cannot parse: so the answer is read from the requests themselves.
  // A "no" stands only when every request the verification made was answered, or reverted.
  const watched = watchedRequests(chain.publicClient);
  const verified = await verifyHash(watched.client, { address, hash: hashMessage(message), signature }).catch(
    () => false,
  );
  if (verified) return true;
  return watched.failed() ? 'unchecked' : false;
}

/**
 * The most gas one verification's eth_call may burn. The address and, for a wallet not deployed yet
 * (ERC-6492), the factory it runs are a stranger's to pick: without a cap a call that loops runs to
 * the node's own (30M gas on anvil, 50M on some nodes). A deploy and a passkey check take well under.
 */
export const MAX_SIGNATURE_CHECK_GAS = 3_000_000n;

/**
 * A copy of `client` whose requests are watched: `failed()` says whether one failed other than by a
 * revert. Its eth_calls carry MAX_SIGNATURE_CHECK_GAS.
 */
function watchedRequests(client: PublicClient): { client: PublicClient; failed: () => boolean } {
  let failures = 0;
  const request = (async (args: { method: string; params?: unknown }, options?: unknown) => {
    try {
      return await client.request(withGasCap(args) as never, options as never);
    } catch (error) {
      // A revert or a halt within the gas cap is the wallet's answer (a contract that burns the cap
      // or returns more than memory gas allows says no), never the node's failure: read as such, a
      // stranger's signature naming such code made a payer's sign-in 503 and a non-payer's 402.
      if (!isRevert(error) && !isExecutionHalt(error)) failures++;
      throw error;
    }
  }) as PublicClient['request'];
  return { client: { ...client, request }, failed: () => failures > 0 };
}

/** An eth_call's request with the cap as its gas (viem's verifyHash names none). */
function withGasCap(args: { method: string; params?: unknown }) {
  if (args.method !== 'eth_call' || !Array.isArray(args.params)) return args;
  const [call, ...rest] = args.params as [Record<string, unknown>, ...unknown[]];
  return { ...args, params: [{ ...call, gas: numberToHex(MAX_SIGNATURE_CHECK_GAS) }, ...rest] };
}

/** Whether `address` has code now ('unknown' when the node does not say). */
async function codeOf(client: PublicClient, address: Address): Promise<'some' | 'none' | 'unknown'> {
  try {
    return (await hasCode(client, address)) ? 'some' : 'none';
  } catch {
    return 'unknown';
  }
}
