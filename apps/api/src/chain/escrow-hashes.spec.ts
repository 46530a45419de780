import { batchSettlementDomain, CHANNEL_CONFIG_TYPES, VOUCHER_TYPES, type ChannelConfig } from '@crawlgate/core';
import { getAddress, hashTypedData, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { channelIdIn, voucherDigest } from './escrow-hashes';

const ESCROW = '0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003';
const address = () => privateKeyToAddress(generatePrivateKey());
const salt = () => generatePrivateKey();
const config = (): ChannelConfig => ({
  payer: address(),
  payerAuthorizer: address(),
  receiver: address(),
  receiverAuthorizer: address(),
  token: address(),
  withdrawDelay: 86_400,
  salt: salt(),
});
const viemChannelId = (domain: ReturnType<typeof batchSettlementDomain>, message: ChannelConfig) =>
  hashTypedData({ domain, types: CHANNEL_CONFIG_TYPES, primaryType: 'ChannelConfig', message });

describe('channelIdIn', () => {
  const domain = batchSettlementDomain(31337, ESCROW);

  it("is viem's hash of the config, asked once or again", () => {
    const one = config();
    expect(channelIdIn(domain, one)).toBe(viemChannelId(domain, one));
    expect(channelIdIn(domain, { ...one })).toBe(viemChannelId(domain, one));
  });

  it('tells apart configs that differ in any one field, and the same config in another escrow or chain', () => {
    const base = config();
    expect(channelIdIn(domain, base)).toBe(viemChannelId(domain, base));
    const variants: ChannelConfig[] = [
      { ...base, payer: address() },
      { ...base, payerAuthorizer: address() },
      { ...base, receiver: address() },
      { ...base, receiverAuthorizer: address() },
      { ...base, token: address() },
      { ...base, withdrawDelay: 86_401 },
      { ...base, salt: salt() },
    ];
    const ids = variants.map((variant) => channelIdIn(domain, variant));
    expect(ids).toEqual(variants.map((variant) => viemChannelId(domain, variant)));
    expect(new Set([channelIdIn(domain, base), ...ids]).size).toBe(variants.length + 1);
    for (const other of [batchSettlementDomain(8453, ESCROW), batchSettlementDomain(31337, address())])
      expect(channelIdIn(other, base)).toBe(viemChannelId(other, base));
    expect(channelIdIn(batchSettlementDomain(8453, ESCROW), base)).not.toBe(channelIdIn(domain, base));
  });

  it('refuses an address in neither lower case nor its checksum as viem does, even once its other spellings were hashed', () => {
    const base = config();
    const lower = { ...base, payer: base.payer.toLowerCase() as Hex };
    const checksummed = { ...base, payer: getAddress(base.payer) };
    expect(channelIdIn(domain, lower)).toBe(channelIdIn(domain, checksummed));
    // Flip the case of one letter of the checksummed spelling: no longer its checksum.
    const at = checksummed.payer.slice(2).search(/[a-fA-F]/) + 2;
    const flipped = checksummed.payer[at] === checksummed.payer[at].toUpperCase() ? 'toLowerCase' : 'toUpperCase';
    const bad = {
      ...base,
      payer: (checksummed.payer.slice(0, at) +
        checksummed.payer[at][flipped]() +
        checksummed.payer.slice(at + 1)) as Hex,
    };
    expect(() => viemChannelId(domain, bad)).toThrow();
    expect(() => channelIdIn(domain, bad)).toThrow();
  });
});

describe('voucherDigest', () => {
  it("is viem's EIP-712 digest of the voucher, in each escrow's domain", () => {
    for (const domain of [batchSettlementDomain(31337, ESCROW), batchSettlementDomain(8453, address())])
      for (const maxClaimableAmount of [0n, 1n, 10_000n, 2n ** 128n - 1n]) {
        const voucher = { channelId: salt(), maxClaimableAmount };
        expect(voucherDigest(domain, voucher)).toBe(
          hashTypedData({ domain, types: VOUCHER_TYPES, primaryType: 'Voucher', message: voucher }),
        );
      }
  });
});
