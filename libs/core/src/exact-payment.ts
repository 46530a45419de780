import { randomHex32 } from './keys';
import {
  TRANSFER_WITH_AUTHORIZATION_TYPES,
  type ExactEvmPayload,
  type Hex,
  type PaymentPayloadV1,
  type PaymentPayloadV2,
  type PaymentRequirementsV2,
  type ResourceInfo,
} from './x402';

/*
 * The paying side of x402's "exact" scheme on EVM (EIP-3009), built once for every caller: the
 * authorization an agent signs, the EIP-712 typed data to sign (in the shape viem's signTypedData
 * takes; core itself signs nothing), and the X-PAYMENT / PAYMENT-SIGNATURE body carrying the
 * signature, which parsePaymentPayload reads back.
 */

/**
 * EIP-3009 TransferWithAuthorization as a signer holds it: numbers as bigint (on the wire they are
 * decimal strings). A type, not an interface: viem's typed-data calls need its implicit index signature.
 */
export type TransferAuthorization = {
  from: Hex;
  to: Hex;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
};

/** The token's EIP-712 domain: the asset's `{name, version}` (x402 `extra`), its chain and its address. */
export type TokenDomain = {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: Hex;
};

/** How far back an authorization is valid from, as x402 clients sign it: room for a clock behind ours. */
export const AUTHORIZATION_CLOCK_SKEW_SECONDS = 600;

/**
 * An authorization shaped like an x402 client's: valid from AUTHORIZATION_CLOCK_SKEW_SECONDS ago
 * until `validForSeconds` from `now` (unix seconds, default the wall clock), with a random nonce.
 */
export function exactAuthorization(args: {
  from: Hex;
  to: Hex;
  value: bigint;
  validForSeconds: number;
  now?: number;
}): TransferAuthorization {
  if (!Number.isSafeInteger(args.validForSeconds) || args.validForSeconds < 0)
    throw new RangeError(`validForSeconds must be a non-negative integer, got ${args.validForSeconds}`);
  const now = BigInt(args.now ?? Math.floor(Date.now() / 1000));
  return {
    from: args.from,
    to: args.to,
    value: args.value,
    validAfter: now - BigInt(AUTHORIZATION_CLOCK_SKEW_SECONDS),
    validBefore: now + BigInt(args.validForSeconds),
    nonce: randomHex32(),
  };
}

/** What the payer's wallet signs (EIP-712), e.g. `account.signTypedData(transferWithAuthorizationTypedData(domain, auth))`. */
export function transferWithAuthorizationTypedData(domain: TokenDomain, authorization: TransferAuthorization) {
  return {
    domain,
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization' as const,
    message: authorization,
  };
}

/** The `payload` of an exact EVM payment: the signature and the authorization with its numbers as decimal strings. */
export function exactEvmPayload(authorization: TransferAuthorization, signature: Hex): ExactEvmPayload {
  return {
    signature,
    authorization: {
      from: authorization.from,
      to: authorization.to,
      value: authorization.value.toString(),
      validAfter: authorization.validAfter.toString(),
      validBefore: authorization.validBefore.toString(),
      nonce: authorization.nonce,
    },
  };
}

/** An x402 v1 payment (the decoded X-PAYMENT header, or `payment` of POST /v1/gates/{id}/verify). */
export function exactPaymentV1(
  network: string,
  authorization: TransferAuthorization,
  signature: Hex,
): PaymentPayloadV1 {
  return { x402Version: 1, scheme: 'exact', network, payload: exactEvmPayload(authorization, signature) };
}

/** An x402 v2 payment (the decoded PAYMENT-SIGNATURE header): echoes the requirement it pays as `accepted`. */
export function exactPaymentV2(
  accepted: PaymentRequirementsV2,
  authorization: TransferAuthorization,
  signature: Hex,
  more: { resource?: ResourceInfo; extensions?: Record<string, unknown> } = {},
): PaymentPayloadV2 {
  const payment: PaymentPayloadV2 = { x402Version: 2, accepted, payload: exactEvmPayload(authorization, signature) };
  if (more.resource !== undefined) payment.resource = more.resource;
  if (more.extensions !== undefined) payment.extensions = more.extensions;
  return payment;
}
