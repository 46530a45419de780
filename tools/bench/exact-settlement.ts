import {
  exactAuthorization,
  MAX_AUTHORIZATION_SECONDS,
  transferWithAuthorizationTypedData,
  USDC_ABI,
} from '@crawlgate/core';
import {
  parseSignature,
  type Account,
  type Address,
  type Chain,
  type Hash,
  type Transport,
  type WalletClient,
} from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';

/** The token's EIP-712 domain, as the API reads it from its chain. */
export interface TokenDomain {
  usdcName: string;
  usdcVersion: string;
  chainId: number;
  usdc: Address;
}

/**
 * One exact settlement as the API relays it: `payer` signs a transferWithAuthorization of `value` to
 * `to`, and `relayer` sends it (the (v, r, s) overload). The transaction's hash, not waited for.
 */
export async function relayExactTransfer(
  relayer: WalletClient<Transport, Chain, Account>,
  token: TokenDomain,
  payer: PrivateKeyAccount,
  to: Address,
  value: bigint,
): Promise<Hash> {
  const message = exactAuthorization({ from: payer.address, to, value, validForSeconds: MAX_AUTHORIZATION_SECONDS });
  const domain = {
    name: token.usdcName,
    version: token.usdcVersion,
    chainId: token.chainId,
    verifyingContract: token.usdc,
  };
  const { r, s, yParity } = parseSignature(
    await payer.signTypedData(transferWithAuthorizationTypedData(domain, message)),
  );
  return relayer.writeContract({
    address: token.usdc,
    abi: USDC_ABI,
    functionName: 'transferWithAuthorization',
    args: [
      message.from,
      message.to,
      message.value,
      message.validAfter,
      message.validBefore,
      message.nonce,
      yParity + 27,
      r,
      s,
    ],
  });
}
