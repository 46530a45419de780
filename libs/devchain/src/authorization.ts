import { randomBytes } from 'node:crypto';
import { toHex, type Address, type Hex, type LocalAccount } from 'viem';
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from '@crawlgate/core';
import { DEFAULT_USDC_NAME, DEFAULT_USDC_VERSION } from './deploy';

// Signing side of EIP-3009 for tests: what an agent's wallet does before it pays.

export { TRANSFER_WITH_AUTHORIZATION_TYPES };

export const RECEIVE_WITH_AUTHORIZATION_TYPES = {
  ReceiveWithAuthorization: TRANSFER_WITH_AUTHORIZATION_TYPES.TransferWithAuthorization,
} as const;

export const CANCEL_AUTHORIZATION_TYPES = {
  CancelAuthorization: [
    { name: 'authorizer', type: 'address' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

export interface UsdcDomain {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: Address;
}

export interface TransferAuthorization {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
}

/** The token's EIP-712 domain; defaults to the TestUSDC default "USD Coin" / "2". */
export function usdcDomain(chainId: number, usdc: Address, name = DEFAULT_USDC_NAME, version = DEFAULT_USDC_VERSION): UsdcDomain {
  return { name, version, chainId, verifyingContract: usdc };
}

/** 32 random bytes, as x402 clients use for EIP-3009 nonces. */
export function randomNonce(): Hex {
  return toHex(randomBytes(32));
}

/**
 * An authorization shaped like an x402 client's: valid from 600 s ago until `validForSeconds`
 * from now, with a random nonce. `now` is unix seconds (default: the wall clock).
 */
export function buildAuthorization(args: {
  from: Address;
  to: Address;
  value: bigint;
  validForSeconds?: number;
  now?: number;
}): TransferAuthorization {
  const now = BigInt(args.now ?? Math.floor(Date.now() / 1000));
  return {
    from: args.from,
    to: args.to,
    value: args.value,
    validAfter: now - 600n,
    validBefore: now + BigInt(args.validForSeconds ?? 60),
    nonce: randomNonce(),
  };
}

/** Signs TransferWithAuthorization (or ReceiveWithAuthorization) as a 65-byte r‖s‖v hex. */
export function signAuthorization(
  signer: LocalAccount,
  domain: UsdcDomain,
  auth: TransferAuthorization,
  kind: 'transfer' | 'receive' = 'transfer',
): Promise<Hex> {
  return kind === 'transfer'
    ? signer.signTypedData({ domain, types: TRANSFER_WITH_AUTHORIZATION_TYPES, primaryType: 'TransferWithAuthorization', message: auth })
    : signer.signTypedData({ domain, types: RECEIVE_WITH_AUTHORIZATION_TYPES, primaryType: 'ReceiveWithAuthorization', message: auth });
}

/** Signs CancelAuthorization(authorizer, nonce). */
export function signCancelAuthorization(signer: LocalAccount, domain: UsdcDomain, authorizer: Address, nonce: Hex): Promise<Hex> {
  return signer.signTypedData({
    domain,
    types: CANCEL_AUTHORIZATION_TYPES,
    primaryType: 'CancelAuthorization',
    message: { authorizer, nonce },
  });
}
