import { type Address, type Hex, type LocalAccount } from 'viem';
import {
  exactAuthorization,
  randomHex32,
  TRANSFER_WITH_AUTHORIZATION_TYPES,
  transferWithAuthorizationTypedData,
  type TokenDomain,
  type TransferAuthorization,
} from '@crawlgate/core';
import { DEFAULT_USDC_NAME, DEFAULT_USDC_VERSION } from './deploy';

// Signing side of EIP-3009 for tests: what an agent's wallet does before it pays.

export { TRANSFER_WITH_AUTHORIZATION_TYPES, type TransferAuthorization };

export const RECEIVE_WITH_AUTHORIZATION_TYPES = {
  ReceiveWithAuthorization: TRANSFER_WITH_AUTHORIZATION_TYPES.TransferWithAuthorization,
} as const;

export const CANCEL_AUTHORIZATION_TYPES = {
  CancelAuthorization: [
    { name: 'authorizer', type: 'address' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

export type UsdcDomain = TokenDomain;

/** The token's EIP-712 domain; defaults to the TestUSDC default "USD Coin" / "2". */
export function usdcDomain(
  chainId: number,
  usdc: Address,
  name = DEFAULT_USDC_NAME,
  version = DEFAULT_USDC_VERSION,
): UsdcDomain {
  return { name, version, chainId, verifyingContract: usdc };
}

/** 32 random bytes, as x402 clients use for EIP-3009 nonces. */
export const randomNonce: () => Hex = randomHex32;

/** An x402 client's authorization (core's exactAuthorization), valid for 60 s unless told. `now` is unix seconds. */
export function buildAuthorization(args: {
  from: Address;
  to: Address;
  value: bigint;
  validForSeconds?: number;
  now?: number;
}): TransferAuthorization {
  return exactAuthorization({ ...args, validForSeconds: args.validForSeconds ?? 60 });
}

/** Signs TransferWithAuthorization (or ReceiveWithAuthorization) as a 65-byte r‖s‖v hex. */
export function signAuthorization(
  signer: LocalAccount,
  domain: UsdcDomain,
  auth: TransferAuthorization,
  kind: 'transfer' | 'receive' = 'transfer',
): Promise<Hex> {
  return kind === 'transfer'
    ? signer.signTypedData(transferWithAuthorizationTypedData(domain, auth))
    : signer.signTypedData({
        domain,
        types: RECEIVE_WITH_AUTHORIZATION_TYPES,
        primaryType: 'ReceiveWithAuthorization',
        message: auth,
      });
}

/** Signs CancelAuthorization(authorizer, nonce). */
export function signCancelAuthorization(
  signer: LocalAccount,
  domain: UsdcDomain,
  authorizer: Address,
  nonce: Hex,
): Promise<Hex> {
  return signer.signTypedData({
    domain,
    types: CANCEL_AUTHORIZATION_TYPES,
    primaryType: 'CancelAuthorization',
    message: { authorizer, nonce },
  });
}
