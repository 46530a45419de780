import { BATCH_SETTLEMENT_ABI } from '@crawlgate/core';
import { encodeFunctionData, erc20Abi, type Hex } from 'viem';
import { claimsIn, settleCalldata } from './escrow';

/*
 * Review finding 8 (helper-386): the claimer reads a stuck claim's channels from its calldata to
 * judge its urgency; calldata that is no escrow call (a transaction of another kind: a USDC
 * transfer, or what a node answers) threw, and failed its receiver's whole claim run. It is no claim.
 */

const ADDRESS = `0x${'11'.repeat(20)}` as const;
const CONFIG = {
  payer: ADDRESS,
  payerAuthorizer: ADDRESS,
  receiver: ADDRESS,
  receiverAuthorizer: ADDRESS,
  token: ADDRESS,
  withdrawDelay: 900,
  salt: `0x${'00'.repeat(32)}` as Hex,
};
const SIGNATURE = `0x${'22'.repeat(65)}` as Hex;

describe('claimsIn', () => {
  it('reads the claims of a claimWithSignature', () => {
    const claims = [{ voucher: { channel: CONFIG, maxClaimableAmount: 10n }, signature: SIGNATURE, totalClaimed: 10n }];
    const data = encodeFunctionData({
      abi: BATCH_SETTLEMENT_ABI,
      functionName: 'claimWithSignature',
      args: [claims, SIGNATURE],
    });

    expect(claimsIn(data)).toEqual(claims);
  });

  it('finds none in another escrow call', () => {
    expect(claimsIn(settleCalldata(ADDRESS, ADDRESS))).toEqual([]);
  });

  it('finds none, and does not throw, in a call of another contract or calldata no ABI reads', () => {
    const transfer = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [ADDRESS, 1n] });

    expect(claimsIn(transfer)).toEqual([]);
    expect(claimsIn('0x')).toEqual([]);
    expect(claimsIn('0xdeadbeef00')).toEqual([]);
  });
});
