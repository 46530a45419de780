import { USDC_ABI } from '@crawlgate/core';
import { encodeAbiParameters, encodeEventTopics, keccak256, toHex, type Hex } from 'viem';
import {
  authorizationsUsedIn,
  earliestAcceptanceOf,
  settledTransferIndex,
  unusedAuthorizationFate,
  usedNonceIn,
} from './authorization-checks';

const usdc = '0x00000000000000000000000000000000000000aa' as const;
const payer = '0x1111111111111111111111111111111111111111' as const;
const payTo = '0x2222222222222222222222222222222222222222' as const;
const stranger = '0x3333333333333333333333333333333333333333' as const;
const nonce = keccak256(toHex('nonce'));
const auth = { from: payer, to: payTo, value: 10_000n, nonce };

const used = (authorizer: Hex, usedNonce: Hex, address: Hex = usdc) => ({
  address,
  topics: encodeEventTopics({ abi: USDC_ABI, eventName: 'AuthorizationUsed', args: { authorizer, nonce: usedNonce } }),
  data: '0x' as Hex,
});
const transfer = (from: Hex, to: Hex, value: bigint, address: Hex = usdc) => ({
  address,
  topics: encodeEventTopics({ abi: USDC_ABI, eventName: 'Transfer', args: { from, to } }),
  data: encodeAbiParameters([{ type: 'uint256' }], [value]),
});
const receipt = (...logs: ReturnType<typeof used>[]) => ({
  status: 'success' as const,
  logs: logs.map((log, logIndex) => ({ ...log, logIndex })) as never,
});

describe('settledTransferIndex', () => {
  it('is the Transfer(from, to, value) right after AuthorizationUsed(from, nonce)', () => {
    expect(settledTransferIndex({ usdc }, receipt(used(payer, nonce), transfer(payer, payTo, 10_000n)), auth)).toBe(1);
  });

  it('is none where the same nonce paid anyone else, or another amount', () => {
    expect(settledTransferIndex({ usdc }, receipt(used(payer, nonce), transfer(payer, payer, 0n)), auth)).toBeNull();
    expect(settledTransferIndex({ usdc }, receipt(used(payer, nonce), transfer(payer, payTo, 9_999n)), auth)).toBe(
      null,
    );
    expect(settledTransferIndex({ usdc }, receipt(used(payer, nonce), transfer(stranger, payTo, 10_000n)), auth)).toBe(
      null,
    );
  });

  it("counts no transfer but the one right after the nonce's use: one payment in a transaction cannot pay two gates", () => {
    const other = keccak256(toHex('other nonce'));
    // The nonce spent paying nothing, and the gate's price moved by another authorization in the same transaction.
    const spentElsewhere = receipt(
      used(payer, nonce),
      transfer(payer, payer, 0n),
      used(payer, other),
      transfer(payer, payTo, 10_000n),
    );
    expect(settledTransferIndex({ usdc }, spentElsewhere, auth)).toBeNull();
    expect(settledTransferIndex({ usdc }, spentElsewhere, { ...auth, nonce: other })).toBe(3);
    // Something logged in between: not the token's own pair.
    const between = receipt(used(payer, nonce), transfer(payer, payTo, 1n, stranger), transfer(payer, payTo, 10_000n));
    expect(settledTransferIndex({ usdc }, between, auth)).toBeNull();
  });

  it("believes only our token's events, only in a transaction that succeeded", () => {
    const elsewhere = receipt(used(payer, nonce, stranger), transfer(payer, payTo, 10_000n, stranger));
    expect(settledTransferIndex({ usdc }, elsewhere, auth)).toBeNull();
    const reverted = { ...receipt(used(payer, nonce), transfer(payer, payTo, 10_000n)), status: 'reverted' as const };
    expect(settledTransferIndex({ usdc }, reverted, auth)).toBeNull();
    expect(settledTransferIndex({ usdc }, receipt(), auth)).toBeNull();
  });
});

describe('usedNonceIn', () => {
  it("is a successful transaction with our token's AuthorizationUsed(from, nonce), whatever it paid", () => {
    expect(usedNonceIn({ usdc }, receipt(used(payer, nonce), transfer(payer, payTo, 10_000n)), auth)).toBe(true);
    expect(usedNonceIn({ usdc }, receipt(used(payer, nonce), transfer(payer, payer, 0n)), auth)).toBe(true);
  });

  it('is not a reverted one, one without that event, or one with another token’s', () => {
    const reverted = { ...receipt(used(payer, nonce), transfer(payer, payTo, 10_000n)), status: 'reverted' as const };
    expect(usedNonceIn({ usdc }, reverted, auth)).toBe(false);
    expect(usedNonceIn({ usdc }, receipt(transfer(payer, payTo, 10_000n)), auth)).toBe(false);
    expect(usedNonceIn({ usdc }, receipt(used(payer, keccak256(toHex('other')))), auth)).toBe(false);
    expect(usedNonceIn({ usdc }, receipt(used(stranger, nonce)), auth)).toBe(false);
    expect(usedNonceIn({ usdc }, receipt(used(payer, nonce, stranger)), auth)).toBe(false);
  });
});

describe('unusedAuthorizationFate', () => {
  it('expires an authorization only once the chain’s head is stamped at or past its validBefore', () => {
    expect(unusedAuthorizationFate(1_000n, 1_000n, 900n)).toBe('expired');
    expect(unusedAuthorizationFate(1_000n, 1_001n, 900n)).toBe('expired');
    expect(unusedAuthorizationFate(1_000n, 999n, 900n)).not.toBe('expired');
  });

  it('never expires one on this machine’s clock alone, however far ahead it runs', () => {
    expect(unusedAuthorizationFate(1_000n, 990n, 5_000n)).toBe('wait');
  });

  it('sends one again only with six seconds left by both clocks', () => {
    expect(unusedAuthorizationFate(1_000n, 994n, 900n)).toBe('send');
    expect(unusedAuthorizationFate(1_000n, 995n, 900n)).toBe('wait');
    expect(unusedAuthorizationFate(1_000n, 900n, 994n)).toBe('send');
    expect(unusedAuthorizationFate(1_000n, 900n, 995n)).toBe('wait');
  });
});

describe('authorizationsUsedIn', () => {
  const indexed = (...logs: ReturnType<typeof used>[]) => ({
    logs: logs.map((log, logIndex) => ({ ...log, logIndex })) as never,
  });

  it('lists each authorization a bundle used, whatever else it moved', () => {
    const other = keccak256(toHex('other'));
    // A bundle: someone's own transfer to pay_to first, then a claimed authorization and its Transfer.
    const bundle = indexed(
      transfer(stranger, payTo, 10_000n),
      used(payer, nonce),
      transfer(payer, payTo, 10_000n),
      used(stranger, other),
    );
    expect(authorizationsUsedIn({ usdc }, bundle)).toEqual([
      { authorizer: payer, nonce },
      { authorizer: stranger, nonce: other },
    ]);
  });

  it('reads only our token’s events', () => {
    const elsewhere = '0x00000000000000000000000000000000000000bb' as const;
    expect(
      authorizationsUsedIn({ usdc }, indexed(used(payer, nonce, elsewhere), transfer(payer, payTo, 1n, elsewhere))),
    ).toEqual([]);
  });
});

describe('earliestAcceptanceOf', () => {
  it('starts where the API could have taken it: validBefore less its longest validity, skew and a margin, whatever validAfter says', () => {
    const validBefore = 1_800_000_000n;
    const taken = validBefore - 300n - 60n - 60n;
    expect(earliestAcceptanceOf({ validBefore })).toBe(taken);
    // No earlier than the chain's first second.
    expect(earliestAcceptanceOf({ validBefore: 100n })).toBe(0n);
  });
});
