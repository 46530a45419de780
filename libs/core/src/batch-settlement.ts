/*
 * x402's `batch-settlement` EVM scheme (specs/schemes/batch-settlement/scheme_batch_settlement_evm.md):
 * the escrow's EIP-712 types and domain, where x402 clients expect the contracts, the reason codes
 * we answer with, and a strict parser for the payment a client sends (deposit + voucher, or voucher
 * alone). Plain data: who signs or verifies is the caller's business (core has no viem).
 */

import type { Hex, PaymentRequirementsV2 } from './x402';
import { holdsEip55Checksum } from './keys';
import { HEX_BYTES } from './hex-bytes';

export const BATCH_SETTLEMENT_SCHEME = 'batch-settlement';
export const BATCH_SETTLEMENT_DOMAIN_NAME = 'x402 Batch Settlement';
export const BATCH_SETTLEMENT_DOMAIN_VERSION = '1';

/** Where `@x402/evm` 2.x expects the escrow and its EIP-3009 deposit collector (x402's CREATE2 addresses). */
export const X402_BATCH_SETTLEMENT_ADDRESS: Hex = '0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003';
export const X402_ERC3009_DEPOSIT_COLLECTOR_ADDRESS: Hex = '0x4020806089470a89826cB9fB1f4059150b550004';

/** x402's bounds on a channel's withdraw delay, in seconds (15 minutes to 30 days). */
export const MIN_WITHDRAW_DELAY = 900;
export const MAX_WITHDRAW_DELAY = 2_592_000;

const UINT128_MAX = (1n << 128n) - 1n;

export interface ChannelConfig {
  payer: Hex;
  /** EOA that signs vouchers; zero address: the payer signs (ECDSA or ERC-1271). */
  payerAuthorizer: Hex;
  receiver: Hex;
  /** Signs claim batches and refunds; never zero. */
  receiverAuthorizer: Hex;
  token: Hex;
  /** Seconds, MIN_WITHDRAW_DELAY..MAX_WITHDRAW_DELAY. */
  withdrawDelay: number;
  salt: Hex;
}

export const CHANNEL_CONFIG_TYPES = {
  ChannelConfig: [
    { name: 'payer', type: 'address' },
    { name: 'payerAuthorizer', type: 'address' },
    { name: 'receiver', type: 'address' },
    { name: 'receiverAuthorizer', type: 'address' },
    { name: 'token', type: 'address' },
    { name: 'withdrawDelay', type: 'uint40' },
    { name: 'salt', type: 'bytes32' },
  ],
} as const;

export const VOUCHER_TYPES = {
  Voucher: [
    { name: 'channelId', type: 'bytes32' },
    { name: 'maxClaimableAmount', type: 'uint128' },
  ],
} as const;

export const REFUND_TYPES = {
  Refund: [
    { name: 'channelId', type: 'bytes32' },
    { name: 'nonce', type: 'uint256' },
    { name: 'amount', type: 'uint128' },
  ],
} as const;

export const CLAIM_BATCH_TYPES = {
  ClaimBatch: [{ name: 'claims', type: 'ClaimEntry[]' }],
  ClaimEntry: [
    { name: 'channelId', type: 'bytes32' },
    { name: 'maxClaimableAmount', type: 'uint128' },
    { name: 'totalClaimed', type: 'uint128' },
  ],
} as const;

export interface BatchSettlementDomain {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: Hex;
}

/** The escrow's EIP-712 domain: bound to the chain and to where the escrow lives. */
export function batchSettlementDomain(chainId: number, escrow: Hex): BatchSettlementDomain {
  return {
    name: BATCH_SETTLEMENT_DOMAIN_NAME,
    version: BATCH_SETTLEMENT_DOMAIN_VERSION,
    chainId,
    verifyingContract: escrow,
  };
}

/** Reason codes of the scheme that we answer with (x402's names). */
export const BATCH_REASONS = {
  scheme: 'invalid_batch_settlement_evm_scheme',
  networkMismatch: 'invalid_batch_settlement_evm_network_mismatch',
  channelIdMismatch: 'invalid_batch_settlement_evm_channel_id_mismatch',
  receiverMismatch: 'invalid_batch_settlement_evm_receiver_mismatch',
  receiverAuthorizerMismatch: 'invalid_batch_settlement_evm_receiver_authorizer_mismatch',
  tokenMismatch: 'invalid_batch_settlement_evm_token_mismatch',
  withdrawDelayMismatch: 'invalid_batch_settlement_evm_withdraw_delay_mismatch',
  voucherSignature: 'invalid_batch_settlement_evm_voucher_signature',
  voucherPayload: 'invalid_batch_settlement_evm_voucher_payload',
  depositPayload: 'invalid_batch_settlement_evm_deposit_payload',
  cumulativeMismatch: 'invalid_batch_settlement_evm_cumulative_amount_mismatch',
  cumulativeExceedsBalance: 'invalid_batch_settlement_evm_cumulative_exceeds_balance',
  channelNotFound: 'invalid_batch_settlement_evm_channel_not_found',
  channelBusy: 'invalid_batch_settlement_evm_channel_busy',
  depositSimulationFailed: 'invalid_batch_settlement_evm_deposit_simulation_failed',
  depositTransactionFailed: 'invalid_batch_settlement_evm_deposit_transaction_failed',
  payloadType: 'invalid_batch_settlement_evm_payload_type',
  refundPayload: 'invalid_batch_settlement_evm_refund_payload',
  refundNoBalance: 'invalid_batch_settlement_evm_refund_no_balance',
  refundAmountInvalid: 'invalid_batch_settlement_evm_refund_amount_invalid',
  refundSimulationFailed: 'invalid_batch_settlement_evm_refund_simulation_failed',
  refundTransactionFailed: 'invalid_batch_settlement_evm_refund_transaction_failed',
} as const;

/** The `extra` a batch-settlement requirement carries (x402's fields, plus our gate id and escrow). */
export interface BatchSettlementTerms {
  /** Where the escrow is (the EIP-712 domain's verifyingContract). */
  escrow: Hex;
  receiverAuthorizer: Hex;
  withdrawDelay: number;
}

/** A channel as a corrective 402 and a PAYMENT-RESPONSE state it (`extra.channelState`); amounts decimal strings. */
export interface ChannelStateView {
  channelId: Hex;
  balance: string;
  totalClaimed: string;
  withdrawRequestedAt: number;
  refundNonce: string;
  chargedCumulativeAmount: string;
}

/** The last voucher the server holds, so a client can check its own signature before adopting our total. */
export interface VoucherStateView {
  signedMaxClaimable: string;
  signature: Hex;
}

export interface BatchVoucher {
  channelId: Hex;
  maxClaimableAmount: bigint;
  signature: Hex;
}

export interface Erc3009DepositAuthorization {
  validAfter: bigint;
  validBefore: bigint;
  salt: bigint;
  signature: Hex;
}

export interface BatchSettlementPayment {
  accepted: PaymentRequirementsV2;
  /** `refund`: x402's cooperative refund request; its voucher is for what the channel was charged, and pays nothing. */
  type: 'deposit' | 'voucher' | 'refund';
  channelConfig: ChannelConfig;
  voucher: BatchVoucher;
  /** Present on `deposit` payloads. */
  deposit?: { amount: bigint; erc3009: Erc3009DepositAuthorization };
  /** On `refund` payloads: the amount asked back; absent, all that is not charged. */
  refundAmount?: bigint;
}

export type ParsedBatchSettlementPayment =
  { ok: true; payment: BatchSettlementPayment } | { ok: false; reason: string; msg: string };

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;
const UINT = /^\d{1,78}$/;
// Room for an ERC-1271 / ERC-6492 signature; an EOA's is 65 bytes.
const MAX_SIGNATURE_HEX_DIGITS = 16_384;

class Invalid extends Error {
  constructor(
    readonly reason: string,
    msg: string,
  ) {
    super(msg);
  }
}

/** True when a decoded payment names the batch-settlement scheme (x402 v2 `accepted.scheme`). */
export function isBatchSettlementPayment(input: unknown): boolean {
  const accepted = (input as { accepted?: { scheme?: unknown } } | null)?.accepted;
  return (input as { x402Version?: unknown } | null)?.x402Version === 2 && accepted?.scheme === BATCH_SETTLEMENT_SCHEME;
}

/**
 * Validates a decoded PAYMENT-SIGNATURE object paying with `batch-settlement` and returns a copy of
 * the known fields with amounts as bigints. Permit2 deposits are not taken.
 */
export function parseBatchSettlementPayment(input: unknown): ParsedBatchSettlementPayment {
  try {
    const root = object(input, 'payment', BATCH_REASONS.voucherPayload);
    if (root.x402Version !== 2)
      throw new Invalid(BATCH_REASONS.voucherPayload, 'batch-settlement is x402 v2 only: x402Version must be 2');
    const acceptedRaw = object(root.accepted, 'accepted', BATCH_REASONS.voucherPayload);
    if (acceptedRaw.scheme !== BATCH_SETTLEMENT_SCHEME)
      throw new Invalid(BATCH_REASONS.scheme, 'accepted.scheme must be batch-settlement');
    const accepted = requirements(acceptedRaw);
    const payload = object(root.payload, 'payload', BATCH_REASONS.voucherPayload);
    if (payload.type !== 'deposit' && payload.type !== 'voucher' && payload.type !== 'refund') {
      throw new Invalid(BATCH_REASONS.payloadType, 'payload.type must be "deposit", "voucher" or "refund"');
    }
    const channelConfig = config(payload.channelConfig);
    const voucher = voucherOf(payload.voucher);
    const payment: BatchSettlementPayment = { accepted, type: payload.type, channelConfig, voucher };
    if (payload.type === 'deposit') payment.deposit = depositOf(payload.deposit);
    if (payload.type === 'refund' && payload.amount !== undefined)
      payment.refundAmount = refundAmountOf(payload.amount);
    return { ok: true, payment };
  } catch (error) {
    if (error instanceof Invalid) return { ok: false, reason: error.reason, msg: error.message };
    throw error;
  }
}

function requirements(req: Record<string, unknown>): PaymentRequirementsV2 {
  const why = BATCH_REASONS.voucherPayload;
  const timeout = req.maxTimeoutSeconds;
  if (!Number.isSafeInteger(timeout) || (timeout as number) < 0)
    throw new Invalid(why, 'accepted.maxTimeoutSeconds must be a non-negative integer');
  const accepted: PaymentRequirementsV2 = {
    scheme: BATCH_SETTLEMENT_SCHEME,
    network: text(req.network, 'accepted.network', why),
    amount: uintText(req.amount, 'accepted.amount', why),
    asset: text(req.asset, 'accepted.asset', why),
    payTo: text(req.payTo, 'accepted.payTo', why),
    maxTimeoutSeconds: timeout as number,
  };
  if (req.extra !== undefined) accepted.extra = object(req.extra, 'accepted.extra', why);
  return accepted;
}

function config(value: unknown): ChannelConfig {
  const why = BATCH_REASONS.voucherPayload;
  const c = object(value, 'payload.channelConfig', why);
  const delay = c.withdrawDelay;
  if (
    !Number.isSafeInteger(delay) ||
    (delay as number) < MIN_WITHDRAW_DELAY ||
    (delay as number) > MAX_WITHDRAW_DELAY
  ) {
    throw new Invalid(
      why,
      `payload.channelConfig.withdrawDelay must be an integer from ${MIN_WITHDRAW_DELAY} to ${MAX_WITHDRAW_DELAY}`,
    );
  }
  return {
    payer: address(c.payer, 'payload.channelConfig.payer', why),
    payerAuthorizer: address(c.payerAuthorizer, 'payload.channelConfig.payerAuthorizer', why),
    receiver: address(c.receiver, 'payload.channelConfig.receiver', why),
    receiverAuthorizer: address(c.receiverAuthorizer, 'payload.channelConfig.receiverAuthorizer', why),
    token: address(c.token, 'payload.channelConfig.token', why),
    withdrawDelay: delay as number,
    salt: matching(c.salt, BYTES32, 'payload.channelConfig.salt', why),
  };
}

function voucherOf(value: unknown): BatchVoucher {
  const why = BATCH_REASONS.voucherPayload;
  const v = object(value, 'payload.voucher', why);
  const amount = BigInt(uintText(v.maxClaimableAmount, 'payload.voucher.maxClaimableAmount', why));
  if (amount > UINT128_MAX) throw new Invalid(why, 'payload.voucher.maxClaimableAmount must fit a uint128');
  return {
    channelId: matching(v.channelId, BYTES32, 'payload.voucher.channelId', why),
    maxClaimableAmount: amount,
    signature: signature(v.signature, 'payload.voucher.signature', why),
  };
}

function depositOf(value: unknown): { amount: bigint; erc3009: Erc3009DepositAuthorization } {
  const why = BATCH_REASONS.depositPayload;
  const d = object(value, 'payload.deposit', why);
  const amount = BigInt(uintText(d.amount, 'payload.deposit.amount', why));
  if (amount === 0n || amount > UINT128_MAX)
    throw new Invalid(why, 'payload.deposit.amount must be a positive uint128');
  const authorization = object(d.authorization, 'payload.deposit.authorization', why);
  if (authorization.erc3009Authorization === undefined) {
    throw new Invalid(
      why,
      'payload.deposit.authorization.erc3009Authorization is required (Permit2 deposits are not taken)',
    );
  }
  const a = object(authorization.erc3009Authorization, 'payload.deposit.authorization.erc3009Authorization', why);
  const field = (name: string) => `payload.deposit.authorization.erc3009Authorization.${name}`;
  const salt = a.salt;
  // x402's client sends the salt as 0x-hex bytes32; the collector takes it as a uint256.
  const saltValue =
    typeof salt === 'string' && BYTES32.test(salt) ? BigInt(salt) : BigInt(uintText(salt, field('salt'), why));
  return {
    amount,
    erc3009: {
      validAfter: BigInt(uintText(a.validAfter, field('validAfter'), why)),
      validBefore: BigInt(uintText(a.validBefore, field('validBefore'), why)),
      salt: saltValue,
      signature: signature(a.signature, field('signature'), why),
    },
  };
}

/** x402's `amount` of a refund: a positive decimal string within uint128. */
function refundAmountOf(value: unknown): bigint {
  const why = BATCH_REASONS.refundAmountInvalid;
  const amount = BigInt(uintText(value, 'payload.amount', why));
  if (amount === 0n || amount > UINT128_MAX) throw new Invalid(why, 'payload.amount must be a positive uint128');
  return amount;
}

function object(value: unknown, field: string, reason: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Invalid(reason, `${field} must be an object`);
  return value as Record<string, unknown>;
}

function text(value: unknown, field: string, reason: string): string {
  if (typeof value !== 'string' || value.length === 0) throw new Invalid(reason, `${field} must be a non-empty string`);
  return value;
}

function matching(value: unknown, pattern: RegExp, field: string, reason: string): Hex {
  if (typeof value !== 'string' || !pattern.test(value)) throw new Invalid(reason, `${field} is malformed`);
  return value as Hex;
}

/** An address as the channel id hashes it: in lower case or as its EIP-55 checksum. */
function address(value: unknown, field: string, reason: string): Hex {
  const text = matching(value, ADDRESS, field, reason);
  if (!holdsEip55Checksum(text)) throw new Invalid(reason, `${field} must be in lower case or its EIP-55 checksum`);
  return text;
}

function signature(value: unknown, field: string, reason: string): Hex {
  if (typeof value !== 'string' || value.length > 2 + MAX_SIGNATURE_HEX_DIGITS || !HEX_BYTES.test(value)) {
    throw new Invalid(reason, `${field} must be 0x followed by hex bytes`);
  }
  return value as Hex;
}

/** A decimal digit string within uint256, kept as written. */
function uintText(value: unknown, field: string, reason: string): string {
  if (typeof value !== 'string' || !UINT.test(value) || BigInt(value) > (1n << 256n) - 1n) {
    throw new Invalid(reason, `${field} must be a decimal integer string`);
  }
  return value;
}
