import {
  isAddressEqual,
  isErc6492Signature,
  recoverMessageAddress,
  size,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import type { ChainContext } from './chain-context';

/**
 * Whether `address` signed `message` (EIP-191), EOAs and smart wallets (ERC-1271, ERC-6492) alike;
 * 'unchecked' when only the chain could tell and it did not answer (no answer is not a "no").
 * A plain signature by the address itself is recovered locally, with no RPC call. An address with
 * no code signs only that way (an ERC-6492 signature excepted: a wallet not deployed yet), so any
 * other signature for it is refused after one code read, remembered (codeOf). Anything else asks
 * the chain (a contract wallet's isValidSignature) through its verifyMessage, after
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
  if (!isErc6492Signature(signature)) {
    const code = await codeOf(chain.publicClient, address);
    if (code === 'unknown') return 'unchecked';
    if (code === 'none') return false;
  }
  await beforeAskingChain?.();
  return chain.publicClient.verifyMessage({ address, message, signature }).catch(() => 'unchecked' as const);
}

/**
 * How long an address found with no code is taken to have none: an EOA may be given code later
 * (EIP-7702), and a wallet deployed since signs as one after this.
 */
const CODELESS_MS = 10 * 60_000;
/** Addresses remembered per chain client at most; all are forgotten when full (an address is read again). */
const MAX_CODELESS = 10_000;
const codelessByClient = new WeakMap<object, Map<string, number>>();

/** Whether `address` has code on the chain; 'none' is remembered for CODELESS_MS, so a stranger's proofs naming an EOA cost one read. */
async function codeOf(client: PublicClient, address: Address): Promise<'some' | 'none' | 'unknown'> {
  let codeless = codelessByClient.get(client);
  if (!codeless) codelessByClient.set(client, (codeless = new Map()));
  const key = address.toLowerCase();
  const until = codeless.get(key);
  if (until !== undefined && Date.now() < until) return 'none';
  let code: Hex | undefined;
  try {
    code = await client.getCode({ address });
  } catch {
    return 'unknown';
  }
  if (code !== undefined && code !== '0x') return 'some';
  if (codeless.size >= MAX_CODELESS) codeless.clear();
  codeless.set(key, Date.now() + CODELESS_MS);
  return 'none';
}
