import { encodeAbiParameters, hashTypedData, keccak256, type Address, type Hex, type LocalAccount } from 'viem';
import {
  CHANNEL_CONFIG_TYPES,
  CLAIM_BATCH_TYPES,
  REFUND_TYPES,
  VOUCHER_TYPES,
  type BatchSettlementDomain,
  type ChannelConfig,
} from '@crawlgate/core';
import { RECEIVE_WITH_AUTHORIZATION_TYPES, type UsdcDomain } from './authorization';

// The EIP-712 side of x402's batch-settlement scheme, as the escrow (contracts/BatchSettlement.sol)
// checks it: channel ids, payer vouchers, receiver claim batches and refunds, and the payer's
// EIP-3009 deposit authorization for the ERC-3009 deposit collector.

// The types, domain and bounds are core's (the API verifies with them); re-exported under their old names.
export {
  BATCH_SETTLEMENT_DOMAIN_NAME,
  BATCH_SETTLEMENT_DOMAIN_VERSION,
  MIN_WITHDRAW_DELAY,
  MAX_WITHDRAW_DELAY,
  CHANNEL_CONFIG_TYPES,
  VOUCHER_TYPES,
  REFUND_TYPES,
  CLAIM_BATCH_TYPES,
  batchSettlementDomain,
  type ChannelConfig,
  type BatchSettlementDomain,
} from '@crawlgate/core';

/** One row of `claim` / `claimWithSignature`: the payer's voucher and the cumulative total to record. */
export interface VoucherClaim {
  voucher: { channel: ChannelConfig; maxClaimableAmount: bigint };
  signature: Hex;
  totalClaimed: bigint;
}

/** channelId = EIP-712 hash of the config under the escrow's domain. */
export function channelIdOf(domain: BatchSettlementDomain, config: ChannelConfig): Hex {
  return hashTypedData({ domain, types: CHANNEL_CONFIG_TYPES, primaryType: 'ChannelConfig', message: config });
}

/** The payer authorizer's cumulative voucher: the receiver may claim up to `maxClaimableAmount` in total. */
export function signVoucher(
  signer: LocalAccount,
  domain: BatchSettlementDomain,
  channelId: Hex,
  maxClaimableAmount: bigint,
): Promise<Hex> {
  return signer.signTypedData({
    domain,
    types: VOUCHER_TYPES,
    primaryType: 'Voucher',
    message: { channelId, maxClaimableAmount },
  });
}

/** The receiver authorizer's signature over a whole claim batch (`claimWithSignature`). */
export function signClaimBatch(
  signer: LocalAccount,
  domain: BatchSettlementDomain,
  claims: readonly VoucherClaim[],
): Promise<Hex> {
  return signer.signTypedData({
    domain,
    types: CLAIM_BATCH_TYPES,
    primaryType: 'ClaimBatch',
    message: {
      claims: claims.map((c) => ({
        channelId: channelIdOf(domain, c.voucher.channel),
        maxClaimableAmount: c.voucher.maxClaimableAmount,
        totalClaimed: c.totalClaimed,
      })),
    },
  });
}

/** The receiver authorizer's relayable refund at the channel's current `refundNonce`. */
export function signRefund(
  signer: LocalAccount,
  domain: BatchSettlementDomain,
  channelId: Hex,
  nonce: bigint,
  amount: bigint,
): Promise<Hex> {
  return signer.signTypedData({
    domain,
    types: REFUND_TYPES,
    primaryType: 'Refund',
    message: { channelId, nonce, amount },
  });
}

/** The EIP-3009 nonce a deposit must carry: it binds the payer's authorization to one channel. */
export function erc3009DepositNonce(channelId: Hex, salt: bigint): Hex {
  return keccak256(encodeAbiParameters([{ type: 'bytes32' }, { type: 'uint256' }], [channelId, salt]));
}

export interface Erc3009Deposit {
  validAfter: bigint;
  validBefore: bigint;
  salt: bigint;
  signature: Hex;
}

/**
 * The payer's `ReceiveWithAuthorization` of `amount` to the deposit collector for `channelId`,
 * valid for `validForSeconds` from `now` (unix seconds, default the wall clock).
 */
export async function signErc3009Deposit(args: {
  /** The key that signs: the payer's own, or the owner key of a smart-wallet payer. */
  payer: LocalAccount;
  /** The paying address when it is not the signer's (an ERC-1271 wallet). */
  from?: Address;
  tokenDomain: UsdcDomain;
  collector: Address;
  channelId: Hex;
  amount: bigint;
  salt: bigint;
  validForSeconds?: number;
  now?: number;
}): Promise<Erc3009Deposit> {
  const validAfter = 0n;
  const validBefore = BigInt((args.now ?? Math.floor(Date.now() / 1000)) + (args.validForSeconds ?? 3600));
  const signature = await args.payer.signTypedData({
    domain: args.tokenDomain,
    types: RECEIVE_WITH_AUTHORIZATION_TYPES,
    primaryType: 'ReceiveWithAuthorization',
    message: {
      from: args.from ?? args.payer.address,
      to: args.collector,
      value: args.amount,
      validAfter,
      validBefore,
      nonce: erc3009DepositNonce(args.channelId, args.salt),
    },
  });
  return { validAfter, validBefore, salt: args.salt, signature };
}

/** `collectorData` for `deposit(config, amount, collector, collectorData)` through the ERC-3009 collector. */
export function erc3009CollectorData(d: Erc3009Deposit): Hex {
  return encodeAbiParameters(
    [{ type: 'uint256' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'bytes' }],
    [d.validAfter, d.validBefore, d.salt, d.signature],
  );
}
