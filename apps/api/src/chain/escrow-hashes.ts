import {
  CHANNEL_CONFIG_TYPES,
  VOUCHER_TYPES,
  type BatchSettlementDomain,
  type BatchVoucher,
  type ChannelConfig,
  rememberLast,
} from '@crawlgate/core';
import { concat, getTypesForEIP712Domain, hashDomain, hashStruct, hashTypedData, keccak256, type Hex } from 'viem';

/*
 * The escrow's EIP-712 hashes a voucher payment needs, without hashing again what does not change:
 * viem's hashTypedData hashes the domain and every type string on each call. A channel's id is
 * kept per config (a payer's pages name the same one), the domain separator per escrow. Each is
 * viem's own value: a miss computes it with viem, and a key holds every field that goes into it.
 */

/** Channel ids kept; the least recently computed go first. */
const MAX_CHANNEL_IDS = 10_000;
const channelIds = new Map<string, Hex>();
const separators = new Map<string, Hex>();

// Exact spellings: an address in neither lower case nor its checksum misses, and viem refuses it as before.
const domainKey = (domain: BatchSettlementDomain) =>
  JSON.stringify([domain.name, domain.version, domain.chainId, domain.verifyingContract]);

/** The id of the channel `config` opens in the escrow of `domain` (its EIP-712 hash). */
export function channelIdIn(domain: BatchSettlementDomain, config: ChannelConfig): Hex {
  const key = JSON.stringify([
    domainKey(domain),
    config.payer,
    config.payerAuthorizer,
    config.receiver,
    config.receiverAuthorizer,
    config.token,
    config.withdrawDelay,
    config.salt,
  ]);
  let id = channelIds.get(key);
  if (id === undefined) {
    id = hashTypedData({ domain, types: CHANNEL_CONFIG_TYPES, primaryType: 'ChannelConfig', message: config });
    rememberLast(channelIds, key, id, MAX_CHANNEL_IDS);
  }
  return id;
}

/** The EIP-712 digest the payer signs for `voucher` in the escrow of `domain`: hashTypedData's, its domain hashed once. */
export function voucherDigest(
  domain: BatchSettlementDomain,
  voucher: Pick<BatchVoucher, 'channelId' | 'maxClaimableAmount'>,
): Hex {
  const message = { channelId: voucher.channelId, maxClaimableAmount: voucher.maxClaimableAmount };
  return keccak256(
    concat([
      '0x1901',
      separatorOf(domain),
      hashStruct({ data: message, primaryType: 'Voucher', types: VOUCHER_TYPES }),
    ]),
  );
}

function separatorOf(domain: BatchSettlementDomain): Hex {
  const key = domainKey(domain);
  let separator = separators.get(key);
  if (separator === undefined) {
    const types = { EIP712Domain: getTypesForEIP712Domain({ domain }) };
    separator = hashDomain({ domain, types } as Parameters<typeof hashDomain>[0]);
    separators.set(key, separator);
  }
  return separator;
}
