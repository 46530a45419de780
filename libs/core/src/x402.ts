/*
 * x402 wire types (v1 and v2, "exact" scheme on EVM via EIP-3009) and a strict parser for the
 * payment a client sends (X-PAYMENT or PAYMENT-SIGNATURE, decoded). Field names follow the
 * x402 specification (specs/x402-specification-v1.md and -v2.md). Amounts and times are decimal
 * strings on the wire; nothing here converts them to numbers.
 */

import { HEX_BYTES } from './hex-bytes';

export type Hex = `0x${string}`;

/** One way to pay, x402 v1: named networks, amount in `maxAmountRequired`, resource inline. */
export interface PaymentRequirementsV1 {
  scheme: string;
  network: string;
  /** Atomic token units, decimal string. */
  maxAmountRequired: string;
  resource: string;
  description: string;
  mimeType: string;
  outputSchema?: Record<string, unknown> | null;
  payTo: string;
  maxTimeoutSeconds: number;
  asset: string;
  /** For "exact" on EVM: the token's EIP-712 domain, `{name, version}`. */
  extra?: Record<string, unknown>;
}

/** The 402 body of x402 v1. */
export interface PaymentRequiredV1 {
  x402Version: 1;
  error: string;
  accepts: PaymentRequirementsV1[];
}

export interface ResourceInfo {
  url: string;
  description?: string;
  mimeType?: string;
}

/** One way to pay, x402 v2: CAIP-2 networks ("eip155:8453"), amount in `amount`. */
export interface PaymentRequirementsV2 {
  scheme: string;
  network: string;
  /** Atomic token units, decimal string. */
  amount: string;
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra?: Record<string, unknown>;
}

/** The PAYMENT-REQUIRED header of x402 v2 (base64 JSON). */
export interface PaymentRequiredV2 {
  x402Version: 2;
  error?: string;
  resource: ResourceInfo;
  accepts: PaymentRequirementsV2[];
  extensions?: Record<string, unknown>;
}

/** EIP-3009 TransferWithAuthorization parameters; numbers as decimal strings, nonce 32 bytes hex. */
export interface ExactEvmAuthorization {
  from: Hex;
  to: Hex;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: Hex;
}

export interface ExactEvmPayload {
  signature: Hex;
  authorization: ExactEvmAuthorization;
}

export interface PaymentPayloadV1 {
  x402Version: 1;
  scheme: string;
  network: string;
  payload: ExactEvmPayload;
}

/** v2 echoes the chosen requirement as `accepted`. */
export interface PaymentPayloadV2 {
  x402Version: 2;
  accepted: PaymentRequirementsV2;
  payload: ExactEvmPayload;
  resource?: ResourceInfo;
  extensions?: Record<string, unknown>;
}

/** X-PAYMENT-RESPONSE (v1) / PAYMENT-RESPONSE (v2); `transaction` is "" when settlement failed. */
export interface SettleResponse {
  success: boolean;
  errorReason?: string;
  transaction: string;
  network: string;
  payer: string;
  /** batch-settlement: what moved on chain ("" for a voucher alone, the deposit for a deposit). */
  amount?: string;
  /** batch-settlement: `chargedAmount` and `channelState`. */
  extra?: Record<string, unknown>;
}

/** Answer of a facilitator's POST /verify. */
export interface VerifyResponse {
  isValid: boolean;
  invalidReason?: string;
  payer?: string;
}

/** Reason codes of x402 (v1 names, then those v2 added), keyed by themselves. */
export const X402_REASONS = {
  insufficient_funds: 'insufficient_funds',
  invalid_exact_evm_payload_authorization_valid_after: 'invalid_exact_evm_payload_authorization_valid_after',
  invalid_exact_evm_payload_authorization_valid_before: 'invalid_exact_evm_payload_authorization_valid_before',
  invalid_exact_evm_payload_authorization_value: 'invalid_exact_evm_payload_authorization_value',
  invalid_exact_evm_payload_signature: 'invalid_exact_evm_payload_signature',
  invalid_exact_evm_payload_recipient_mismatch: 'invalid_exact_evm_payload_recipient_mismatch',
  invalid_network: 'invalid_network',
  invalid_payload: 'invalid_payload',
  invalid_scheme: 'invalid_scheme',
  payment_expired: 'payment_expired',
  duplicate_settlement: 'duplicate_settlement',
  unexpected_settle_error: 'unexpected_settle_error',
  invalid_exact_evm_nonce_already_used: 'invalid_exact_evm_nonce_already_used',
  invalid_exact_evm_insufficient_balance: 'invalid_exact_evm_insufficient_balance',
  invalid_exact_evm_token_name_mismatch: 'invalid_exact_evm_token_name_mismatch',
} as const;

export type X402Reason = (typeof X402_REASONS)[keyof typeof X402_REASONS];

/** EIP-712 types of EIP-3009's TransferWithAuthorization, in the shape viem's typed-data calls take. */
export const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

export type ParsedPaymentPayload =
  | {
      ok: true;
      version: 1 | 2;
      scheme: string;
      network: string;
      payload: ExactEvmPayload;
      accepted?: PaymentRequirementsV2;
    }
  | { ok: false; reason: 'invalid_payload'; msg: string };

// Above any plausible signature, ERC-6492 wrappers included; bounds the work spent on hostile input.
const MAX_SIGNATURE_HEX_DIGITS = 16_384;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;
const UINT = /^\d{1,78}$/;
const UINT256_MAX = (1n << 256n) - 1n;

/** Thrown inside the parser only, to leave it with the first problem found. */
class Invalid extends Error {}

/**
 * Validates a decoded X-PAYMENT / PAYMENT-SIGNATURE object (x402 v1 or v2, "exact" EVM payload) and
 * returns a copy holding only the known fields. Scheme and network are those of the payload (v1) or
 * of `accepted` (v2); whether we support them is the caller's decision.
 */
export function parsePaymentPayload(input: unknown): ParsedPaymentPayload {
  try {
    const root = object(input, 'payment');
    if (root.x402Version === 1) {
      const scheme = text(root.scheme, 'scheme');
      const network = text(root.network, 'network');
      return { ok: true, version: 1, scheme, network, payload: exactEvmPayload(root.payload) };
    }
    if (root.x402Version === 2) {
      const accepted = requirementsV2(root.accepted);
      const payload = exactEvmPayload(root.payload);
      return { ok: true, version: 2, scheme: accepted.scheme, network: accepted.network, payload, accepted };
    }
    throw new Invalid('x402Version must be 1 or 2');
  } catch (error) {
    if (error instanceof Invalid) return { ok: false, reason: 'invalid_payload', msg: error.message };
    throw error;
  }
}

function exactEvmPayload(value: unknown): ExactEvmPayload {
  const payload = object(value, 'payload');
  const signature = text(payload.signature, 'payload.signature');
  if (signature.length > 2 + MAX_SIGNATURE_HEX_DIGITS || !HEX_BYTES.test(signature)) {
    throw new Invalid('payload.signature must be 0x followed by hex bytes');
  }
  const auth = object(payload.authorization, 'payload.authorization');
  return {
    signature: signature as Hex,
    authorization: {
      from: address(auth.from, 'payload.authorization.from'),
      to: address(auth.to, 'payload.authorization.to'),
      value: uint256(auth.value, 'payload.authorization.value'),
      validAfter: uint256(auth.validAfter, 'payload.authorization.validAfter'),
      validBefore: uint256(auth.validBefore, 'payload.authorization.validBefore'),
      nonce: matching(auth.nonce, BYTES32, 'payload.authorization.nonce', '0x followed by 64 hex characters'),
    },
  };
}

function requirementsV2(value: unknown): PaymentRequirementsV2 {
  const req = object(value, 'accepted');
  const timeout = req.maxTimeoutSeconds;
  if (!Number.isSafeInteger(timeout) || (timeout as number) < 0) {
    throw new Invalid('accepted.maxTimeoutSeconds must be a non-negative integer');
  }
  const accepted: PaymentRequirementsV2 = {
    scheme: text(req.scheme, 'accepted.scheme'),
    network: text(req.network, 'accepted.network'),
    amount: uint256(req.amount, 'accepted.amount'),
    asset: text(req.asset, 'accepted.asset'),
    payTo: text(req.payTo, 'accepted.payTo'),
    maxTimeoutSeconds: timeout as number,
  };
  if (req.extra !== undefined) accepted.extra = object(req.extra, 'accepted.extra');
  return accepted;
}

function object(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Invalid(`${field} must be an object`);
  return value as Record<string, unknown>;
}

function text(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length === 0) throw new Invalid(`${field} must be a non-empty string`);
  return value;
}

function matching(value: unknown, pattern: RegExp, field: string, what: string): Hex {
  if (typeof value !== 'string' || !pattern.test(value)) throw new Invalid(`${field} must be ${what}`);
  return value as Hex;
}

function address(value: unknown, field: string): Hex {
  return matching(value, ADDRESS, field, 'an EVM address (0x followed by 40 hex characters)');
}

/** A decimal digit string that fits a uint256, as EIP-3009 declares value and times. */
function uint256(value: unknown, field: string): string {
  if (typeof value !== 'string' || !UINT.test(value) || BigInt(value) > UINT256_MAX) {
    throw new Invalid(`${field} must be a decimal integer string within uint256`);
  }
  return value;
}
